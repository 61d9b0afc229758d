package gitclaims

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// update is one ref a push sets (New) or deletes (New ""), expecting Old
// ("" = the ref must not exist).
type update struct {
	Ref, Old, New string
}

// outcome is what the remote said of one ref of a push.
type outcome struct {
	ok     bool
	reason string // git's words for a rejection
	detail string // the remote's error line naming the ref, if any
	// settled is an outcome read back with ls-remote after a push that
	// said nothing clear; has is then what the remote holds ("" none).
	settled bool
	has     string
}

// push sends updates as one push (atomic when more than one) with a lease on each ref's old
// value. It returns per-ref outcomes; err is set when the push said
// nothing clear (a timeout, a dead connection), after ls-remote decided
// what the remote holds now.
func (l *Lanes) push(ctx context.Context, ups []update) (map[string]outcome, error) {
	args := []string{"push", "--porcelain", "--no-verify"}
	if len(ups) > 1 {
		args = append(args, "--atomic")
	}
	for _, u := range ups {
		args = append(args, "--force-with-lease="+u.Ref+":"+u.Old)
	}
	args = append(args, l.remote)
	for _, u := range ups {
		args = append(args, u.New+":"+u.Ref)
	}
	out, err := l.git.run(ctx, nil, nil, args...)
	res := parsePorcelain(string(out))
	var ge *gitenv.Error
	if len(res) == len(ups) {
		if errors.As(err, &ge) {
			for ref, o := range res {
				o.detail = remoteError(ge.Stderr, ref)
				res[ref] = o
			}
		}
		return res, nil
	}
	// A push that exited (not one killed at its deadline) and said so.
	if errors.As(err, &ge) && ge.Code > 0 && refused(ge.Stderr) {
		// The connection never got as far as updating anything.
		return nil, l.unavailable(err)
	}
	// Unclear: the remote says what it holds now.
	return l.settle(ctx, ups, err)
}

// remoteError is the remote's error line about ref in a push's stderr,
// e.g. "cannot lock ref 'refs/…': reference already exists".
func remoteError(stderr, ref string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "'"+ref+"'") {
			line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "remote:"))
			return strings.TrimPrefix(line, "error: ")
		}
	}
	return ""
}

// refused is a push that failed before the remote could update a ref.
func refused(stderr string) bool {
	for _, s := range []string{"Could not read from remote", "does not appear to be a git repository", "unable to connect", "Connection refused", "unable to access", "not found"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// settle asks the remote what each ref holds after a push whose outcome
// was not said: a ref at its New value took, anything else did not.
func (l *Lanes) settle(ctx context.Context, ups []update, cause error) (map[string]outcome, error) {
	args := []string{"ls-remote", l.remote}
	for _, u := range ups {
		args = append(args, u.Ref)
	}
	// Its own deadline: the push may have spent the caller's.
	out, err := l.git.run(context.WithoutCancel(ctx), nil, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("push gave no answer (%v), and asking the remote failed: %w", cause, l.unavailable(err))
	}
	has := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if oid, ref, ok := strings.Cut(line, "\t"); ok {
			has[ref] = oid
		}
	}
	res := map[string]outcome{}
	for _, u := range ups {
		res[u.Ref] = outcome{ok: has[u.Ref] == u.New, reason: "push gave no answer; the remote holds " + orNone(has[u.Ref]), settled: true, has: has[u.Ref]}
	}
	return res, nil
}

func orNone(oid string) string {
	if oid == "" {
		return "no such ref"
	}
	return oid
}

// parsePorcelain reads `git push --porcelain`: ref → outcome.
func parsePorcelain(out string) map[string]outcome {
	res := map[string]outcome{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) < 3 || len(f[0]) != 1 {
			continue
		}
		_, dst, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		res[dst] = outcome{ok: f[0] != "!", reason: f[2]}
	}
	return res
}

// lockHeld is a rejection for a ref lock held on the remote. The remote
// words a lost race the same ("failed to update ref"); its error line
// tells them apart: the ref exists, or is not at the value expected.
func lockHeld(o outcome) bool {
	if strings.Contains(o.detail, "reference already exists") || strings.Contains(o.detail, "but expected") {
		return false
	}
	return strings.Contains(o.reason, "failed to lock") || strings.Contains(o.reason, "cannot lock") || strings.Contains(o.reason, "failed to update ref")
}

// hidden are rejections for a namespace the remote does not take.
func namespaceRefused(reason string) bool {
	return strings.Contains(reason, "hidden") || strings.Contains(reason, "deny") || strings.Contains(reason, "hook declined") || strings.Contains(reason, "funny refname")
}

// pushLease pushes one lease ref update, retrying while a ref lock is held
// on the remote: a racer's lock goes in milliseconds, and the retry then
// says who won; a lock still there after the backoff is a leftover.
func (l *Lanes) pushLease(ctx context.Context, u update) error {
	wait := 150 * time.Millisecond
	for try := 0; ; try++ {
		res, err := l.push(ctx, []update{u})
		if err != nil {
			return err
		}
		o := res[u.Ref]
		switch {
		case o.ok:
			l.unlocked(u.Ref)
			return nil
		case namespaceRefused(o.reason):
			return fmt.Errorf("remote %s refuses %s: %s: %w", l.remote, u.Ref, o.reason, claims.ErrUnavailable)
		case lockHeld(o) && try < 3:
			time.Sleep(wait)
			wait *= 2
			continue
		case lockHeld(o):
			// One plan's lock: the others are still claimable (ErrLocked);
			// check reports it (noteLocked).
			l.noteLocked(u.Ref, orReason(o))
			return fmt.Errorf("remote %s: %s stays locked (%s): a leftover %s.lock on the remote? remove it there if no push is running: %w", l.remote, u.Ref, orReason(o), u.Ref, claims.ErrLocked)
		}
		return fmt.Errorf("%s: %s: %w", u.Ref, orReason(o), claims.ErrLost)
	}
}

// orReason is the remote's own words for a rejection when it gave them.
func orReason(o outcome) string {
	if o.detail != "" {
		return o.detail
	}
	return o.reason
}

// atomicOnly is a ref an atomic push rejected only because another ref of
// the same push was.
func atomicOnly(o outcome) bool { return strings.Contains(o.reason, "atomic") }

// pushFenced pushes a holder's branch update together with its lease
// update in one atomic push, so the branch moves only while the lease is
// the holder's: ErrLost when the lease ref was not at lease.Old (taken
// over, released), ErrBranchMoved when the branch was not at branch.Old
// (someone else pushed there). Either way neither ref moved.
func (l *Lanes) pushFenced(ctx context.Context, lease, branch update) error {
	wait := 150 * time.Millisecond
	for try := 0; ; try++ {
		res, err := l.push(ctx, []update{lease, branch})
		if err != nil {
			return err
		}
		lo, bo := res[lease.Ref], res[branch.Ref]
		switch {
		case lo.ok && bo.ok:
			return nil
		case lo.settled:
			return settledFence(lo, bo, lease, branch)
		case lockedAWhile(lo, bo) && try < 3:
			time.Sleep(wait)
			wait *= 2
			continue
		}
		if err := l.fenceRefusal(lo, bo, lease, branch); err != nil {
			return err
		}
		// Refused without naming why (a remote whose atomic transaction
		// failed may only say so): what it holds now tells.
		res, err = l.settle(ctx, []update{lease, branch}, errors.New(orReason(pick(lo, bo))))
		if err != nil {
			return err
		}
		return settledFence(res[lease.Ref], res[branch.Ref], lease, branch)
	}
}

// lockedAWhile reports whether a fenced push was refused only because a
// ref was locked (another push under way), which passes.
func lockedAWhile(lo, bo outcome) bool {
	return !namespaceRefused(lo.reason) && !namespaceRefused(bo.reason) && (lockHeld(lo) || lockHeld(bo))
}

// fenceRefusal words a fenced push's refusal that names its cause: the
// namespace refused, a ref that stays locked, the lease or the branch not
// where expected; nil when none is named.
func (l *Lanes) fenceRefusal(lo, bo outcome, lease, branch update) error {
	switch {
	case namespaceRefused(lo.reason) || namespaceRefused(bo.reason):
		return fmt.Errorf("remote %s refuses the push of %s: %s: %w", l.remote, branch.Ref, orReason(pick(lo, bo)), claims.ErrUnavailable)
	case lockHeld(lo) || lockHeld(bo):
		return fmt.Errorf("remote %s: a ref of the push of %s stays locked (%s): a leftover .lock on the remote? remove it there if no push is running: %w", l.remote, branch.Ref, orReason(pick(lo, bo)), claims.ErrUnavailable)
	case culprit(lo):
		return fmt.Errorf("%s: %s; %s not pushed: %w", lease.Ref, orReason(lo), branch.Ref, claims.ErrLost)
	case culprit(bo):
		return fmt.Errorf("%s: %s (expected %s): %w", branch.Ref, orReason(bo), orNone(branch.Old), claims.ErrBranchMoved)
	}
	return nil
}

// culprit is a ref an atomic push was refused for, not only with: stale
// on the client's side, or not at its expected value on the remote's.
func culprit(o outcome) bool {
	if o.ok {
		return false
	}
	return strings.Contains(o.detail, "but expected") || !atomicOnly(o) && !lockHeld(o)
}

// settledFence words a fenced push whose answer was lost, from what the
// remote holds now: the lease at its new value means the atomic push
// landed; still at its old value, nothing landed and the holder may try
// again; anything else, the lease is gone.
func settledFence(lo, bo outcome, lease, branch update) error {
	switch lo.has {
	case lease.New:
		return nil
	case lease.Old:
		if bo.has != branch.Old {
			return fmt.Errorf("%s: %s (expected %s): %w", branch.Ref, bo.reason, orNone(branch.Old), claims.ErrBranchMoved)
		}
		return fmt.Errorf("%s: %s: %w", branch.Ref, bo.reason, claims.ErrUnavailable)
	}
	return fmt.Errorf("%s: %s; %s not pushed: %w", lease.Ref, lo.reason, branch.Ref, claims.ErrLost)
}

// pick is the outcome that says why a push failed: the rejected one that
// is not only the atomic push's echo of another.
func pick(a, b outcome) outcome {
	if !a.ok && !atomicOnly(a) {
		return a
	}
	return b
}

// UpdateBranch pushes u alone, with a lease on its old value, for a
// backend whose lease lives elsewhere (etcd): ErrBranchMoved when the
// remote's branch is not at u.Old, so nobody's commits are overwritten.
func (l *Lanes) UpdateBranch(ctx context.Context, u claims.BranchUpdate) error {
	up := update{Ref: u.Ref, Old: u.Old, New: u.New}
	wait := 150 * time.Millisecond
	for try := 0; ; try++ {
		res, err := l.push(ctx, []update{up})
		if err != nil {
			return err
		}
		o := res[up.Ref]
		switch {
		case o.ok:
			return nil
		case o.settled && o.has == up.Old:
			return fmt.Errorf("%s: %s: %w", up.Ref, o.reason, claims.ErrUnavailable)
		case namespaceRefused(o.reason):
			return fmt.Errorf("remote %s refuses %s: %s: %w", l.remote, up.Ref, o.reason, claims.ErrUnavailable)
		case lockHeld(o) && try < 3:
			time.Sleep(wait)
			wait *= 2
			continue
		case lockHeld(o):
			return fmt.Errorf("remote %s: %s stays locked (%s): %w", l.remote, up.Ref, o.reason, claims.ErrUnavailable)
		}
		return fmt.Errorf("%s: %s (expected %s): %w", up.Ref, orReason(o), orNone(up.Old), claims.ErrBranchMoved)
	}
}
