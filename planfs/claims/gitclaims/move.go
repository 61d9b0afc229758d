package gitclaims

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// maxMoveTries bounds how often a move is rebuilt on a branch that moved.
const maxMoveTries = 8

// moveCommit builds, on tip, the commit that moves the plan at rel to lane
// (through an index of its own: the checkout's is never touched) and
// returns it with the new rel.
func (l *Lanes) moveCommit(ctx context.Context, tip, rel string, to model.Lane, msg string) (commit, dst string, err error) {
	r, err := model.ParseRel(rel)
	if err != nil {
		return "", "", err
	}
	dst = string(model.RelOf(to, r.Name()))
	src, dstPath := l.prefix+".plans/"+rel, l.prefix+".plans/"+dst
	out, err := l.git.run(ctx, nil, nil, "ls-tree", "--full-tree", tip, "--", src, dstPath)
	if err != nil {
		return "", "", err
	}
	mode, blob, err := l.planBlob(out, rel, dst, src, dstPath)
	if err != nil {
		return "", "", err
	}
	tmp, err := os.MkdirTemp("", "fleetwatch-move-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	env := append([]string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}, identity...)
	moved := "0 " + strings.Repeat("0", len(blob)) + "\t" + src + "\n" + mode + " " + blob + "\t" + dstPath + "\n"
	if _, err := l.git.run(ctx, nil, env, "read-tree", tip); err != nil {
		return "", "", err
	}
	if _, err := l.git.run(ctx, []byte(moved), env, "update-index", "--index-info"); err != nil {
		return "", "", err
	}
	tree, err := l.git.run(ctx, nil, env, "write-tree")
	if err != nil {
		return "", "", err
	}
	c, err := l.git.run(ctx, []byte(msg+"\n"), env, "commit-tree", strings.TrimSpace(string(tree)), "-p", tip)
	if err != nil {
		return "", "", err
	}
	return strings.TrimSpace(string(c)), dst, nil
}

// planBlob is the mode and blob of the plan at src in ls-tree's output
// out; an error when it is not there, or its destination dstPath is.
func (l *Lanes) planBlob(out []byte, rel, dst, src, dstPath string) (mode, blob string, err error) {
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		meta, path, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		switch {
		case !ok || len(f) != 3:
		case path == dstPath:
			return "", "", fmt.Errorf("%s: %s already exists on %s", rel, dst, l.integration)
		case path == src:
			mode, blob = f[0], f[2]
		}
	}
	if blob == "" {
		return "", "", fmt.Errorf("%s: not on %s/%s (moved or completed elsewhere)", rel, l.remote, l.integration)
	}
	return mode, blob, nil
}

// Move moves rel to lane on the remote integration branch, rebuilt on the
// branch's new tip when it moved, and returns the new rel.
func (l *Lanes) Move(ctx context.Context, rel string, to model.Lane, by, why string) (string, error) {
	return l.moveWith(ctx, rel, to, by, why, nil)
}

// moveWith pushes the move of rel together with also, atomically; only the
// branch part is rebuilt and retried when the branch moved, and a rejection
// of also is ErrLost.
func (l *Lanes) moveWith(ctx context.Context, rel string, to model.Lane, by, why string, also *update) (string, error) {
	branch := "refs/heads/" + l.integration
	msg := fmt.Sprintf("fleetwatch: %s to %s (%s)", model.Rel(rel).Slug(), to, by)
	if why = strings.TrimSpace(why); why != "" {
		// The reason a park gives is kept where every machine reads it.
		msg += "\n\n" + why
	}
	for try := 0; try < maxMoveTries; try++ {
		if err := l.fetch(ctx, false); err != nil {
			return "", err
		}
		tip, _, err := l.refs(ctx)
		if err != nil {
			return "", err
		}
		commit, dst, err := l.moveCommit(ctx, tip, rel, to, msg)
		if err != nil {
			return "", err
		}
		ups := []update{{Ref: branch, Old: tip, New: commit}}
		if also != nil {
			ups = append(ups, *also)
		}
		res, err := l.push(ctx, ups)
		if err != nil {
			return "", err
		}
		if done, err := l.movePushed(res, branch, also); err != nil {
			return "", err
		} else if done {
			return dst, nil
		}
		// The branch moved under us: build the move again on its new tip.
	}
	return "", fmt.Errorf("%s: %s kept moving; gave up after %d tries: %w", rel, l.integration, maxMoveTries, claims.ErrUnavailable)
}

// movePushed reads a move's push (the branch, and also when not nil):
// done when it landed; an error when also was refused for itself (ErrLost)
// or the remote refuses the branch's namespace; neither when the branch
// moved and the move is built again.
func (l *Lanes) movePushed(res map[string]outcome, branch string, also *update) (done bool, err error) {
	if res[branch].ok && (also == nil || res[also.Ref].ok) {
		if also != nil {
			l.unlocked(also.Ref)
		}
		return true, nil
	}
	if also != nil && !res[also.Ref].ok && !strings.Contains(res[also.Ref].reason, "atomic") {
		return false, fmt.Errorf("%s: %s: %w", also.Ref, res[also.Ref].reason, claims.ErrLost)
	}
	if namespaceRefused(res[branch].reason) {
		return false, fmt.Errorf("remote %s refuses %s: %s: %w", l.remote, branch, res[branch].reason, claims.ErrUnavailable)
	}
	return false, nil
}

// Complete moves held's plan to lane and drops its lease ref in one atomic
// push: the plan is never both done and free, nor moved and still leased.
func (b *Backend) Complete(ctx context.Context, held claims.Held, to model.Lane) (string, error) {
	return b.MoveHeld(ctx, held, to, held.Lease.AgentID, "")
}

// MoveHeld moves held's plan to lane and drops its lease ref, CAS on its
// oid, in one atomic push: a park is never a release and then a move,
// between which a racer could claim the plan and keep it parked.
func (b *Backend) MoveHeld(ctx context.Context, held claims.Held, to model.Lane, by, why string) (string, error) {
	return b.moveWith(ctx, held.Rel, to, by, why, &update{Ref: leaseRef(held.Slug), Old: held.Version})
}

// MovePlan moves rel to lane on the integration branch for a verb that
// holds no lease.
func (b *Backend) MovePlan(ctx context.Context, rel string, to model.Lane, by, why string) (string, error) {
	return b.Move(ctx, rel, to, by, why)
}
