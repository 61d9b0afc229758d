package claims

import (
	"context"
	"time"
)

// NoticeLedger is a remote backend that also records which notices went
// to a target every machine shares (a webhook), so the cockpits and
// watchers of several machines post each notice there once, not once
// each. Keys are opaque and short (the notifier hashes the target and the
// notice's ID); a key is kept NoticeKeep, then may be claimed again, as
// the machine's own record forgets its notices.
//
// A claim alone says only that someone meant to post: anyone who can
// write to the remote can make one. A notice counts as posted when its
// claimer confirms it (ConfirmNotices, after the post went out); a claim
// left unconfirmed may be taken over (ClaimNotices naming it), so a
// squatted or abandoned claim delays a notice but never silences it.
type NoticeLedger interface {
	// ClaimNotices claims each key of want for this process: a key whose
	// value is "" only if no one claimed it (create-only), one whose value
	// is a claim's Rev only while that claim still holds it (a take-over
	// of a claim never confirmed). It returns every key's claim as it
	// stands after, Mine where this call made it. An error claims nothing
	// for certain: the caller decides.
	ClaimNotices(ctx context.Context, want map[string]string) (map[string]NoticeClaim, error)
	// ConfirmNotices records that the notices this process claimed were
	// posted: key → the Rev ClaimNotices returned for it.
	ConfirmNotices(ctx context.Context, mine map[string]string) error
	// NoticeClaims reads keys' claims as they stand; a key no one holds is
	// absent.
	NoticeClaims(ctx context.Context, keys []string) (map[string]NoticeClaim, error)
}

// NoticeClaim is one key's claim in a NoticeLedger.
type NoticeClaim struct {
	// Rev names the claim: what a take-over or a confirmation names.
	Rev string
	// Mine: the ClaimNotices call that returned it made it.
	Mine bool
	// Sent: its claimer confirmed the notice was posted.
	Sent bool
}

// NoticeKeep is how long a claimed notice key is kept.
const NoticeKeep = 30 * 24 * time.Hour

// MaxNoticeKeys bounds the keys of one claim (a summary of the notices
// waiting over a target's rate).
const MaxNoticeKeys = 1000
