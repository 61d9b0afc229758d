package gitclaims

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// NoticeRefs is the remote namespace of notices claimed for a shared
// target: refs/fleetwatch/notices/<key>, created by a create-only push,
// moved only by a take-over that names the claim it replaces
// (compare-and-swap), and deleted by a writer NoticeKeep later. Every ref
// of one claim points at the same small commit (an empty tree), whose
// committer time says when.
const NoticeRefs = "refs/fleetwatch/notices/"

// SentRefs holds the confirmations: refs/fleetwatch/notices-sent/<key>,
// created once its claimer posted the notice, pointing at that claim's
// commit. A notice counts as sent only while its key has one.
const SentRefs = "refs/fleetwatch/notices-sent/"

var _ claims.NoticeLedger = (*Backend)(nil)

// ClaimNotices pushes a ref per key, atomic, each with a lease on what
// want says it holds (nothing, or the claim taken over); when the push is
// refused it asks which refs moved (one ls-remote), leaves those to
// their new claimers and pushes the rest again. Once per process it first
// deletes the notice refs older than claims.NoticeKeep.
func (b *Backend) ClaimNotices(ctx context.Context, want map[string]string) (map[string]claims.NoticeClaim, error) {
	keys := slices.Sorted(maps.Keys(want))
	if err := checkNoticeKeys(keys); err != nil {
		return nil, err
	}
	b.pruneNoticesOnce(ctx)
	commit, err := b.noticeCommit(ctx, "claimed")
	if err != nil {
		return nil, err
	}
	got := map[string]claims.NoticeClaim{}
	rest := keys
	for try := 0; try < 4 && len(rest) > 0; try++ {
		if rest, err = b.claimNoticesOnce(ctx, rest, want, commit, got); err != nil {
			return nil, err
		}
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("%d notice refs kept moving under this claim: %w", len(rest), claims.ErrLost)
	}
	return got, nil
}

// claimNoticesOnce pushes the notice refs of keys, atomic, pointing at
// commit, and puts in got each claim settled: this one's, or a new
// claimer's. next are the keys refused unmoved, with the others, to push
// again.
func (b *Backend) claimNoticesOnce(ctx context.Context, keys []string, want map[string]string, commit string, got map[string]claims.NoticeClaim) (next []string, err error) {
	ups := make([]update, len(keys))
	for i, k := range keys {
		ups[i] = update{Ref: NoticeRefs + k, Old: want[k], New: commit}
	}
	res, err := b.push(ctx, ups)
	if err != nil {
		return nil, err
	}
	if allOK(res, ups) {
		for _, k := range keys {
			got[k] = claims.NoticeClaim{Rev: commit, Mine: true}
		}
		return nil, nil
	}
	for _, u := range ups {
		if o := res[u.Ref]; namespaceRefused(o.reason) {
			return nil, fmt.Errorf("remote %s refuses %s: %s: %w", b.remote, u.Ref, o.reason, claims.ErrUnavailable)
		}
	}
	have, err := b.NoticeClaims(ctx, keys)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		switch h := have[k]; {
		case h.Rev == commit: // the push took after all
			got[k] = claims.NoticeClaim{Rev: commit, Mine: true}
		case h.Rev == want[k]: // unmoved: refused with the others
			next = append(next, k)
		default:
			got[k] = h
		}
	}
	return next, nil
}

// ConfirmNotices creates each key's confirmation, pointing at this
// process's claim; one already there (the notice was posted twice: a
// take-over of a claimer slower than the wait) is left as it is.
func (b *Backend) ConfirmNotices(ctx context.Context, mine map[string]string) error {
	keys := slices.Sorted(maps.Keys(mine))
	if err := checkNoticeKeys(keys); err != nil {
		return err
	}
	// One push per key: an atomic push would drop every confirmation for
	// one that exists.
	for _, k := range keys {
		res, err := b.push(ctx, []update{{Ref: SentRefs + k, New: mine[k]}})
		if err != nil {
			return err
		}
		if o := res[SentRefs+k]; namespaceRefused(o.reason) {
			return fmt.Errorf("remote %s refuses %s: %s: %w", b.remote, SentRefs+k, o.reason, claims.ErrUnavailable)
		}
	}
	return nil
}

// NoticeClaims asks the remote (one ls-remote) for keys' claims and
// confirmations.
func (b *Backend) NoticeClaims(ctx context.Context, keys []string) (map[string]claims.NoticeClaim, error) {
	if err := checkNoticeKeys(keys); err != nil {
		return nil, err
	}
	args := []string{"ls-remote", b.remote}
	for _, k := range keys {
		args = append(args, NoticeRefs+k, SentRefs+k)
	}
	out, err := b.git.run(ctx, nil, nil, args...)
	if err != nil {
		return nil, b.unavailable(err)
	}
	held, sent := refLines(string(out), "\t", NoticeRefs), refLines(string(out), "\t", SentRefs)
	got := map[string]claims.NoticeClaim{}
	for _, k := range keys {
		if held[k] != "" || sent[k] != "" {
			got[k] = claims.NoticeClaim{Rev: held[k], Sent: sent[k] != ""}
		}
	}
	return got, nil
}

// noticeCommit writes the commit a claim's refs point at. Who and when,
// to the nanosecond: a racer's commit is never this one, so a ref found
// holding it is this claim's.
func (b *Backend) noticeCommit(ctx context.Context, what string) (string, error) {
	empty, err := b.writeObject(ctx, "tree", nil)
	if err != nil {
		return "", err
	}
	now := time.Now()
	host, _ := os.Hostname()
	who := "fleetwatch <fleetwatch@localhost> " + strconv.FormatInt(now.Unix(), 10) + " +0000"
	text := fmt.Sprintf("tree %s\nauthor %s\ncommitter %s\n\nnotices %s on %s by pid %d at %d\n", empty, who, who, what, host, os.Getpid(), now.UnixNano())
	return b.writeObject(ctx, "commit", []byte(text))
}

func checkNoticeKeys(keys []string) error {
	if len(keys) > claims.MaxNoticeKeys {
		return fmt.Errorf("%d notice keys in one claim, more than %d", len(keys), claims.MaxNoticeKeys)
	}
	for _, k := range keys {
		if !plainKey(k) {
			return fmt.Errorf("notice key %q: only letters, digits, - and _", k)
		}
	}
	return nil
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

// pruneNoticesOnce deletes, once per process, the notice refs and
// confirmations whose commit is older than claims.NoticeKeep, by
// compare-and-swap on the commit read; a failure is left for the next
// process.
func (b *Backend) pruneNoticesOnce(ctx context.Context) {
	b.fleet.mu.Lock()
	done := b.fleet.noticesPruned
	b.fleet.noticesPruned = true
	b.fleet.mu.Unlock()
	if done {
		return
	}
	var ups []update
	for remote, local := range map[string]string{NoticeRefs: b.ns + "notices/", SentRefs: b.ns + "notices-sent/"} {
		ups = append(ups, b.oldNoticeRefs(ctx, remote, local)...)
	}
	// One push per batch, each atomic: a ref claimed again meanwhile
	// fails its batch alone, for the next process.
	for len(ups) > 0 {
		n := min(len(ups), 200)
		_, _ = b.push(ctx, ups[:n])
		ups = ups[n:]
	}
}

// oldNoticeRefs fetches the remote's refs under remote into local and
// returns the deletions of those older than claims.NoticeKeep.
func (b *Backend) oldNoticeRefs(ctx context.Context, remote, local string) []update {
	if _, err := b.git.run(ctx, nil, nil, "-c", "maintenance.auto=false", "fetch", "--no-tags", "--prune", "--no-write-fetch-head",
		"--quiet", b.remote, "+"+remote+"*:"+local+"*"); err != nil {
		return nil
	}
	out, err := b.git.run(ctx, nil, nil, "for-each-ref", "--format=%(committerdate:unix) %(objectname) %(refname)", local)
	if err != nil {
		return nil
	}
	cut := time.Now().Add(-claims.NoticeKeep).Unix()
	var ups []update
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		if at, err := strconv.ParseInt(f[0], 10, 64); err == nil && at < cut {
			ups = append(ups, update{Ref: remote + strings.TrimPrefix(f[2], local), Old: f[1]})
		}
	}
	return ups
}
