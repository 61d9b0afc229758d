package gitclaims

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"fleetwatch/claims"
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
	var ge *gitError
	if len(res) == len(ups) {
		if errors.As(err, &ge) {
			for ref, o := range res {
				o.detail = remoteError(ge.stderr, ref)
				res[ref] = o
			}
		}
		return res, nil
	}
	if errors.As(err, &ge) && !errors.Is(err, errTimedOut) && refused(ge.stderr) {
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
		res[u.Ref] = outcome{ok: has[u.Ref] == u.New, reason: "push gave no answer; the remote holds " + orNone(has[u.Ref])}
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
