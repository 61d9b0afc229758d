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
type NoticeLedger interface {
	// ClaimNotices claims each key for this machine, create-only, and
	// returns those another machine (or an earlier process) claimed
	// first. An error claims nothing for certain: the caller decides.
	ClaimNotices(ctx context.Context, keys []string) (taken map[string]bool, err error)
}

// NoticeKeep is how long a claimed notice key is kept.
const NoticeKeep = 30 * 24 * time.Hour

// MaxNoticeKeys bounds the keys of one claim (a summary of the notices
// waiting over a target's rate).
const MaxNoticeKeys = 1000
