package gitclaims

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/refname"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// A worker's pending mail is mail.json beside worker.json in its record's
// commit: a Send rewrites the commit with one more message, by
// compare-and-swap on the commit it read, and the driver's next publish,
// refused because the ref moved, reads it and replaces the commit with its
// own record (claims/mail.go says what delivery promises).

// sendTries bounds a Send's compare-and-swap attempts: each lost one is a
// publish or another message landing between its read and its push. The
// waits between them (random, up to twice the last, at most a second)
// spread racing senders out: four machines sending to one worker at once
// each land within a few seconds.
const sendTries = 16

// Send leaves m in host's agent's record for its current run.
func (b *Backend) Send(ctx context.Context, host, agent string, m claims.Message) error {
	m, err := claims.CheckMail(host, agent, m)
	if err != nil {
		return err
	}
	return b.rewrite(ctx, host, agent, func(rec *claims.WorkerRecord, box []claims.Message) ([]claims.Message, bool, error) {
		m.Run = rec.Run
		return claims.AddMail(box, m)
	})
}

// rewrite changes host's agent's record and pending mail as change says,
// by compare-and-swap on the commit read, again when another write came
// between (after a short random wait, so racing senders spread out); a
// change that says nothing changed pushes nothing.
func (b *Backend) rewrite(ctx context.Context, host, agent string,
	change func(rec *claims.WorkerRecord, box []claims.Message) ([]claims.Message, bool, error)) error {
	ref := WorkerRef(host, agent)
	if p := refname.Problem(ref); p != "" {
		return fmt.Errorf("worker ref %s: %s", ref, p)
	}
	wait := 100 * time.Millisecond
	for try := 0; try < sendTries; try++ {
		cur, p, err := b.readRecord(ctx, ref)
		switch {
		case err != nil:
			return err
		case cur == "":
			return fmt.Errorf("%s on %s: %w", agent, host, claims.ErrNoWorker)
		case p.Problem != "":
			return fmt.Errorf("%s on %s: %s", agent, host, p.Problem)
		case p.State == claims.WorkerExited:
			return fmt.Errorf("%s on %s: %w", agent, host, claims.ErrWorkerDone)
		}
		// A list that is no list was not written by a Send, and its
		// driver cannot read it either: the new list replaces it. One
		// git could not read now is never replaced unread.
		box, err := b.readMail(ctx, cur)
		if err != nil && !errors.Is(err, errBadMail) {
			return err
		}
		rec := p.WorkerRecord
		box, changed, err := change(&rec, box)
		if err != nil {
			return fmt.Errorf("%s on %s: %w", agent, host, err)
		}
		if !changed {
			return nil
		}
		var data []byte
		if len(box) > 0 {
			data = claims.EncodeMail(box)
		}
		oid, err := b.recordCommit(ctx, rec, data)
		if err != nil {
			return err
		}
		res, err := b.push(ctx, []update{{Ref: ref, Old: cur, New: oid}})
		switch {
		case err != nil:
			return err
		case res[ref].ok:
			return nil
		case namespaceRefused(res[ref].reason):
			return fmt.Errorf("remote %s refuses %s: %s: %w", b.remote, ref, res[ref].reason, claims.ErrUnavailable)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(wait)):
		}
		wait = min(2*wait, time.Second)
	}
	return fmt.Errorf("%s on %s: its record kept changing; ask again: %w", agent, host, claims.ErrLost)
}

// errBadMail is a pending list that is no list (too large, not JSON):
// nothing will ever read it, so the next write replaces it.
var errBadMail = errors.New("not a list of messages")

// readMail reads the pending mail of a record's commit, already fetched:
// none when it holds no mail.json; errBadMail when the list is larger than
// claims.MaxMailBox (never read into memory) or is not one; git's error
// when it could not look.
func (b *Backend) readMail(ctx context.Context, commit string) ([]claims.Message, error) {
	obj := commit + ":mail.json"
	sizes, err := b.objectSizes(ctx, []string{obj})
	if err != nil {
		return nil, err
	}
	n, ok := sizes[obj]
	switch {
	case !ok:
		return nil, nil
	case n > claims.MaxMailBox:
		return nil, fmt.Errorf("mail %s: %d bytes, more than %d; not read: %w", obj, n, claims.MaxMailBox, errBadMail)
	}
	read := map[string][]byte{obj: nil}
	if err := b.catFile(ctx, read); err != nil {
		return nil, err
	}
	box, err := claims.DecodeMail(obj, read[obj])
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, errBadMail)
	}
	return box, nil
}

var _ claims.MailWatcher = (*Backend)(nil)

// MailPoll is how often a publishing driver asks the remote for its own
// ref: one ls-remote of one ref, so mail and stops reach it within about
// MailPoll and a publish however long its heartbeat. Every driver asks for
// its whole life, so not each second: 20 workers on a hosted remote would
// make 72,000 listings an hour.
const MailPoll = 5 * time.Second

// MailChanges says when host's agent's ref on the remote is not the
// commit this process last pushed there: someone wrote into it (a
// message, a stop), and a publish now hears it. A failed listing says
// nothing: the next heartbeat publishes anyway.
func (b *Backend) MailChanges(ctx context.Context, host, agent string) <-chan struct{} {
	ch := make(chan struct{}, 1)
	ref := WorkerRef(host, agent)
	go func() {
		defer close(ch)
		t := time.NewTicker(MailPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			b.fleet.mu.Lock()
			pushed := b.fleet.pushed[ref]
			b.fleet.mu.Unlock()
			lctx, cancel := context.WithTimeout(ctx, defaultTimeout)
			out, err := b.git.run(lctx, nil, nil, "ls-remote", b.remote, ref)
			cancel()
			oid, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
			if err != nil || oid == "" || pushed == "" || oid == pushed {
				continue // nothing written over this driver's record, or nothing to tell
			}
			select {
			case ch <- struct{}{}:
			default: // one pending word covers any number of writes
			}
		}
	}()
	return ch
}
