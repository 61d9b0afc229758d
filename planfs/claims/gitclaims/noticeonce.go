package gitclaims

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"fleetwatch/planfs/claims"
)

// NoticeRefs is the remote namespace of notices claimed for a shared
// target: refs/fleetwatch/notices/<key>, each created once, by a
// create-only push, and deleted by a writer NoticeKeep later. Every ref of
// one claim points at the same small commit (an empty tree), whose
// committer time says when.
const NoticeRefs = "refs/fleetwatch/notices/"

var _ claims.NoticeLedger = (*Backend)(nil)

// ClaimNotices pushes a ref per key, create-only and atomic; when the
// push is refused because some exist, it asks which (one ls-remote) and
// pushes the rest again. Once per process it first deletes the notice
// refs older than claims.NoticeKeep.
func (b *Backend) ClaimNotices(ctx context.Context, keys []string) (map[string]bool, error) {
	if len(keys) > claims.MaxNoticeKeys {
		return nil, fmt.Errorf("%d notice keys in one claim, more than %d", len(keys), claims.MaxNoticeKeys)
	}
	for _, k := range keys {
		if !plainKey(k) {
			return nil, fmt.Errorf("notice key %q: only letters, digits, - and _", k)
		}
	}
	b.pruneNoticesOnce(ctx)
	empty, err := b.writeObject(ctx, "tree", nil)
	if err != nil {
		return nil, err
	}
	// Who and when, to the nanosecond, in the commit: a racer's commit is
	// never this one, so a ref found holding this one is this claim's.
	now := time.Now()
	host, _ := os.Hostname()
	who := "fleetwatch <fleetwatch@localhost> " + strconv.FormatInt(now.Unix(), 10) + " +0000"
	text := fmt.Sprintf("tree %s\nauthor %s\ncommitter %s\n\nnotices claimed on %s by pid %d at %d\n", empty, who, who, host, os.Getpid(), now.UnixNano())
	commit, err := b.writeObject(ctx, "commit", []byte(text))
	if err != nil {
		return nil, err
	}
	taken := map[string]bool{}
	rest := keys
	for try := 0; try < 4 && len(rest) > 0; try++ {
		ups := make([]update, len(rest))
		for i, k := range rest {
			ups[i] = update{Ref: NoticeRefs + k, New: commit}
		}
		res, err := b.push(ctx, ups)
		if err != nil {
			return nil, err
		}
		if allOK(res, ups) {
			return taken, nil
		}
		for _, u := range ups {
			if o := res[u.Ref]; namespaceRefused(o.reason) {
				return nil, fmt.Errorf("remote %s refuses %s: %s: %w", b.remote, u.Ref, o.reason, claims.ErrUnavailable)
			}
		}
		have, err := b.noticeRefsHeld(ctx, rest)
		if err != nil {
			return nil, err
		}
		var next []string
		for _, k := range rest {
			if have[k] != "" && have[k] != commit {
				taken[k] = true
			} else if have[k] == "" {
				next = append(next, k)
			}
		}
		rest = next
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("%d notice refs kept moving under this claim: %w", len(rest), claims.ErrLost)
	}
	return taken, nil
}

func allOK(res map[string]outcome, ups []update) bool {
	for _, u := range ups {
		if !res[u.Ref].ok {
			return false
		}
	}
	return true
}

func plainKey(k string) bool {
	if k == "" || len(k) > 128 {
		return false
	}
	for _, c := range []byte(k) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// noticeRefsHeld asks the remote which of keys' refs exist: key → commit.
func (b *Backend) noticeRefsHeld(ctx context.Context, keys []string) (map[string]string, error) {
	args := []string{"ls-remote", b.remote}
	for _, k := range keys {
		args = append(args, NoticeRefs+k)
	}
	out, err := b.git.run(ctx, nil, nil, args...)
	if err != nil {
		return nil, b.unavailable(err)
	}
	return refLines(string(out), "\t", NoticeRefs), nil
}

// pruneNoticesOnce deletes, once per process, the notice refs whose
// commit is older than claims.NoticeKeep, by compare-and-swap on the
// commit read; a failure is left for the next process.
func (b *Backend) pruneNoticesOnce(ctx context.Context) {
	b.fleet.mu.Lock()
	done := b.fleet.noticesPruned
	b.fleet.noticesPruned = true
	b.fleet.mu.Unlock()
	if done {
		return
	}
	local := b.ns + "notices/"
	if _, err := b.git.run(ctx, nil, nil, "-c", "maintenance.auto=false", "fetch", "--no-tags", "--prune", "--no-write-fetch-head",
		"--quiet", b.remote, "+"+NoticeRefs+"*:"+local+"*"); err != nil {
		return
	}
	out, err := b.git.run(ctx, nil, nil, "for-each-ref", "--format=%(committerdate:unix) %(objectname) %(refname)", local)
	if err != nil {
		return
	}
	cut := time.Now().Add(-claims.NoticeKeep).Unix()
	var ups []update
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		if at, err := strconv.ParseInt(f[0], 10, 64); err == nil && at < cut {
			ups = append(ups, update{Ref: NoticeRefs + strings.TrimPrefix(f[2], local), Old: f[1]})
		}
	}
	// One push per batch, each atomic: a ref claimed again meanwhile
	// fails its batch alone, for the next process.
	for len(ups) > 0 {
		n := min(len(ups), 200)
		_, _ = b.push(ctx, ups[:n])
		ups = ups[n:]
	}
}
