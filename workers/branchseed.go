package workers

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// A remote claim's feature branch: where a new holder starts it, and the
// git it takes to read and move it.

// remoteGitTimeout bounds each fetch and push of a feature branch.
const remoteGitTimeout = 60 * time.Second

// remoteGit is git for a feature branch that travels through the remote:
// never prompting for credentials, bounded by remoteGitTimeout.
func remoteGit(dir string, args ...string) (string, error) {
	return tree.RunGit(remoteGitTimeout, []string{"GIT_TERMINAL_PROMPT=0"}, dir, args...)
}

// remoteBranch is a feature branch on the remote as one read saw it: oid
// "" when it has none; ok false when the read failed.
type remoteBranch struct {
	oid string
	ok  bool
}

// readRemoteBranch fetches ref (refs/heads/…) from the remote into
// refs/fleetwatch/remote/<remote>/heads/…, a ref of its own: FETCH_HEAD is
// shared with every other fetch in the checkout, and another driver's
// could replace it between the fetch and the read.
func readRemoteBranch(project, remote, ref string) (remoteBranch, error) {
	local := "refs/fleetwatch/remote/" + remote + "/heads/" + strings.TrimPrefix(ref, "refs/heads/")
	_, err := remoteGit(project, "fetch", "--no-tags", "--quiet", "--no-write-fetch-head", remote, "+"+ref+":"+local)
	if err != nil {
		if strings.Contains(err.Error(), "couldn't find remote ref") {
			return remoteBranch{ok: true}, nil
		}
		return remoteBranch{}, err
	}
	oid, err := remoteGit(project, "rev-parse", "--verify", "--quiet", local+"^{commit}")
	if err != nil {
		return remoteBranch{}, err
	}
	return remoteBranch{oid: oid, ok: true}, nil
}

// seedFeature makes the local feature/<slug> start where the remote's is:
// created from it, or moved to it, so a new holder (after a takeover)
// builds on whatever the last holder pushed and never pushes an older
// branch over it. A local branch ahead of the remote's stays (pushing it
// is a fast-forward); one that went another way is kept at a keep ref
// first, never lost. Created from tip when the remote has none. It
// returns the remote's branch as it saw it: where this holder's pushes
// move it from.
func (w *WorkOnce) seedFeature(slug, tip string) (remoteBranch, error) {
	branch := tree.FeatureBranch(slug)
	ref := "refs/heads/" + branch
	project := w.Tree.Project
	rb, ferr := readRemoteBranch(project, w.Remote, ref)
	local, _ := remoteGit(project, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	switch {
	case ferr != nil:
		return rb, fmt.Errorf("%s: cannot read %s's: %v", branch, w.Remote, ferr)
	case rb.oid != "" && local == "":
		_, err := remoteGit(project, "branch", branch, rb.oid)
		return rb, err
	case rb.oid != "" && local != rb.oid:
		return rb, w.catchUp(slug, local, rb.oid)
	case rb.oid == "" && local == "" && tip != "":
		if _, err := remoteGit(project, "branch", branch, tip); err != nil {
			return rb, fmt.Errorf("%s: cannot start it at %.12s: %v", branch, tip, err)
		}
	}
	return rb, nil
}

// catchUp moves the local feature/<slug>, at local, to the remote's oid,
// unless it is ahead of it; local commits the remote lacks are kept first.
func (w *WorkOnce) catchUp(slug, local, oid string) error {
	branch, project := tree.FeatureBranch(slug), w.Tree.Project
	if _, err := remoteGit(project, "merge-base", "--is-ancestor", oid, local); err == nil {
		return nil // ahead: the push is a fast-forward
	}
	kept := ""
	if _, err := remoteGit(project, "merge-base", "--is-ancestor", local, oid); err != nil {
		var kerr error
		if kept, kerr = keepBranch(project, slug, local); kerr != nil {
			return fmt.Errorf("%s: the local branch went another way than %s's, and cannot be kept aside (%v); keeping it, so pushes of it are refused", branch, w.Remote, kerr)
		}
	}
	if err := moveBranch(project, w.Worker.AgentID, branch, local, oid); err != nil {
		return fmt.Errorf("%s: cannot move it to %s's %.12s: %v", branch, w.Remote, oid, err)
	}
	if kept != "" {
		w.Say("%s: started from %s's %.12s; the local commits it lacks (%.12s) are kept at %s", branch, w.Remote, oid, local, kept)
	}
	return nil
}

// keepBranch pins oid, a local feature branch about to be moved, at a new
// refs/fleetwatch/keep/<slug>/<unix> ref (create-only), and returns it.
func keepBranch(project, slug, oid string) (string, error) {
	base := fmt.Sprintf("refs/fleetwatch/keep/%s/%d", slug, time.Now().Unix())
	var err error
	for i := range 10 {
		ref := base
		if i > 0 {
			ref = fmt.Sprintf("%s-%d", base, i)
		}
		if _, err = remoteGit(project, "update-ref", ref, oid, ""); err == nil {
			return ref, nil
		}
	}
	return "", err
}

// moveBranch moves branch from old to oid: by compare-and-swap on the ref,
// or, when agent's own worktree has it checked out, by `reset --keep`
// there, which refuses rather than lose uncommitted changes. Another
// worktree's checkout is left alone: its agent may still be at work.
func moveBranch(project, agent, branch, old, oid string) error {
	wt := checkedOutAt(project, branch)
	if wt == "" {
		_, err := remoteGit(project, "update-ref", "refs/heads/"+branch, oid, old)
		return err
	}
	own, ok, err := look.Lookup(project, agent)
	if err != nil || !ok || !samePath(own.Path, wt) {
		return fmt.Errorf("it is checked out in %s", wt)
	}
	_, err = remoteGit(wt, "reset", "--keep", "--quiet", oid)
	return err
}

// samePath reports whether a and b name the same folder.
func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// checkedOutAt is the worktree that has branch checked out, or "".
func checkedOutAt(project, branch string) string {
	out, err := remoteGit(project, "worktree", "list", "--porcelain")
	if err != nil {
		return ""
	}
	wt := ""
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			wt = p
		} else if line == "branch refs/heads/"+branch {
			return wt
		}
	}
	return ""
}
