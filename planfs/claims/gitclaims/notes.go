package gitclaims

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// What this machine remembers of its remote beside the lease clock
// (seen.go), in var/fleet/claims/: the integration branch as it last saw
// it, so a move of the branch backwards (a force-push to an older commit)
// is noticed and never silently reopens completed plans; and the lease
// refs a claim found locked, for `check`.

// tipRecord is the integration branch as this machine last saw it.
type tipRecord struct {
	Tip string `json:"tip"`
	// Done are the slugs completed (or awaiting review) at Tip, and at
	// the tips a rewind left behind.
	Done []string `json:"done"`
	// Rewind is the last backward move seen and not yet accepted.
	Rewind *Rewind `json:"rewind,omitempty"`
}

// Rewind is a move of the integration branch to a commit that does not
// descend from the one this machine saw before.
type Rewind struct {
	From string    `json:"from"`
	To   string    `json:"to"`
	At   time.Time `json:"at"`
	// Reopened are the slugs done before it and back in a ready lane
	// after it: not claimed until an operator accepts the rewind.
	Reopened []string `json:"reopened"`
}

// recordPath is where the record name of this remote is kept, from the
// project root.
func (l *Lanes) recordPath(name string) string {
	return filepath.Join("var", "fleet", "claims", name+"-"+safeName(l.remote)+".json")
}

// recordStamp tells one version of the record name from another: its
// modification time and size ("" when there is none).
func (l *Lanes) recordStamp(name string) string {
	fi, err := os.Stat(filepath.Join(l.project, l.recordPath(name)))
	if err != nil {
		return ""
	}
	return fmt.Sprint(fi.ModTime().UnixNano(), fi.Size())
}

// recordFile reads the JSON record name in var/fleet/claims/ into v, lets
// change update it, and writes it back when change says so; all under one
// lock, so workers on one machine never lose each other's updates.
func (l *Lanes) recordFile(name string, v any, change func() bool) error {
	rel := l.recordPath(name)
	unlock, err := safepath.Lock(l.project, rel+".lock", 30*time.Second)
	if err != nil {
		return err
	}
	defer unlock()
	if f, err := safepath.OpenFile(l.project, rel, os.O_RDONLY, 0); err == nil {
		_ = json.NewDecoder(f).Decode(v) // a torn or foreign file starts afresh
		f.Close()
	}
	if !change() {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dir, err := safepath.OpenDir(l.project, filepath.Dir(rel), true)
	if err != nil {
		return err
	}
	defer dir.Close()
	return atomicfile.WriteAt(dir, filepath.Base(rel), data, 0o644)
}

// judged is snap, the lanes at tip, with what this machine knows of the
// branch's past: the plans a rewind reopened are refused (Snapshot.Refused)
// and the rewind is a warning. The record is kept when the tip moves; a
// rewind is also an event in the project's log, once.
func (l *Lanes) judged(ctx context.Context, tip string, snap *model.Snapshot) *model.Snapshot {
	// A long-lived face (the UI, serve) sees another process's accept:
	// the record is read again whenever it changed.
	stamp := l.recordStamp("tip")
	l.mu.Lock()
	if l.judgedTip == tip && l.judgedIn == snap && l.judgedStamp == stamp {
		out := l.judgedOut
		l.mu.Unlock()
		return out
	}
	l.mu.Unlock()
	var rec tipRecord
	var seen *Rewind
	err := l.recordFile("tip", &rec, func() bool {
		if rec.Tip == tip {
			return false
		}
		forward := rec.Tip == "" || l.descends(ctx, rec.Tip, tip)
		if !forward && !l.remoteAt(ctx, tip) {
			// A read older than the record's (another worker's fetch landed
			// first): the branch did not move back.
			return false
		}
		seen = l.moveTip(&rec, tip, snap, forward)
		return true
	})
	out := *snap
	if err != nil {
		out.Warnings = append(slices.Clip(out.Warnings), model.Warning{File: "var/fleet/claims", Message: "cannot keep the record of " + l.integration + "'s tip: " + err.Error()})
	}
	if seen != nil {
		l.logRewind(seen)
	}
	if rw := rec.Rewind; rw != nil {
		out.Refused = l.refusedByRewind(rw, snap.Plans)
		out.Warnings = append(slices.Clip(out.Warnings), model.Warning{File: l.remote + "/" + l.integration, Message: RewindNotice(rw)})
	}
	l.mu.Lock()
	l.judgedTip, l.judgedIn, l.judgedOut, l.judgedStamp = tip, snap, &out, l.recordStamp("tip")
	l.mu.Unlock()
	return &out
}

// refusedByRewind are the ready plans rw reopened, each with why it is not
// claimed.
func (l *Lanes) refusedByRewind(rw *Rewind, plans []model.Plan) map[string]string {
	refused := map[string]string{}
	why := fmt.Sprintf("completed before %s/%s moved back from %s to %s (a force-push?) at %s; not claimed until an operator completes it again or accepts the rewind (fleetwatch check --accept-rewind)",
		l.remote, l.integration, short(rw.From), short(rw.To), rw.At.UTC().Format(time.RFC3339))
	for _, p := range plans {
		if p.Lane.Ready() && slices.Contains(rw.Reopened, p.Slug) {
			refused[p.Slug] = why
		}
	}
	return refused
}

// moveTip brings rec from its tip to tip, whose lanes are snap, and returns
// the rewind when tip does not descend from rec's (not forward).
func (l *Lanes) moveTip(rec *tipRecord, tip string, snap *model.Snapshot, forward bool) *Rewind {
	done, ready := doneAndReady(snap.Plans)
	old := rec.Tip
	rec.Tip = tip
	if forward {
		rec.Done = done
		if rw := rec.Rewind; rw != nil {
			// Plans completed again, or parked, are no longer reopened.
			rw.Reopened = slices.DeleteFunc(rw.Reopened, func(s string) bool { return !slices.Contains(ready, s) })
		}
		return nil
	}
	rw := &Rewind{From: old, To: tip, At: time.Now()}
	if rec.Rewind != nil {
		rw.Reopened = rec.Rewind.Reopened
	}
	rw.Reopened = addNew(rw.Reopened, slices.DeleteFunc(slices.Clone(rec.Done), func(s string) bool { return !slices.Contains(ready, s) }))
	sort.Strings(rw.Reopened)
	rec.Rewind = rw
	rec.Done = addNew(rec.Done, done)
	return rw
}

// doneAndReady are the plans' slugs done (completed or in review) and
// ready to claim.
func doneAndReady(plans []model.Plan) (done, ready []string) {
	for _, p := range plans {
		switch {
		case p.Lane == model.Completed || p.Lane == model.ReviewNeeded:
			done = append(done, p.Slug)
		case p.Lane.Ready():
			ready = append(ready, p.Slug)
		}
	}
	return done, ready
}

// addNew appends to list each of more it does not hold yet, in order.
func addNew(list, more []string) []string {
	for _, s := range more {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// descends reports whether tip has old in its history. A commit this
// clone no longer has (collected since) cannot be judged, and counts as
// a move forward rather than a false alarm.
func (l *Lanes) descends(ctx context.Context, old, tip string) bool {
	_, err := l.git.run(ctx, nil, nil, "merge-base", "--is-ancestor", old, tip)
	var ge *gitenv.Error
	return err == nil || !errors.As(err, &ge) || ge.Code != 1
}

// remoteAt reports whether the remote's integration branch is at tip now:
// asked once more before a backward move is believed.
func (l *Lanes) remoteAt(ctx context.Context, tip string) bool {
	out, err := l.git.run(ctx, nil, nil, "ls-remote", l.remote, "refs/heads/"+l.integration)
	oid, _, _ := strings.Cut(string(out), "\t")
	return err == nil && oid == tip
}

// RewindNotice is the one line every face gives a rewind.
func RewindNotice(rw *Rewind) string {
	return fmt.Sprintf("moved back from %s to %s (not a descendant: a force-push?), seen at %s; completed plans it put back in a ready lane are not claimed: %s (fleetwatch check --accept-rewind lets them be)",
		short(rw.From), short(rw.To), rw.At.UTC().Format(time.RFC3339), orNothing(rw.Reopened))
}

func orNothing(slugs []string) string {
	if len(slugs) == 0 {
		return "none"
	}
	return strings.Join(slugs, ", ")
}

// LastRewind is the backward move this machine saw last and nobody
// accepted yet, or nil.
func (l *Lanes) LastRewind() (*Rewind, error) {
	var rec tipRecord
	err := l.recordFile("tip", &rec, func() bool { return false })
	return rec.Rewind, err
}

// logRewind records a rewind in the project's event log: the notice every
// face's log shows.
func (l *Lanes) logRewind(rw *Rewind) {
	t, err := planfs.Open(l.project)
	if err != nil {
		return
	}
	t.LogEvent(planfs.Event{Event: "rewind", From: rw.From, To: rw.To, AgentID: "fleetwatch",
		Reason: l.remote + "/" + l.integration + " " + RewindNotice(rw)})
}

// AcceptRewind forgets the last rewind this machine saw: the plans it
// reopened may be claimed again. It reports the rewind forgotten, or nil.
func (l *Lanes) AcceptRewind() (*Rewind, error) {
	var rec tipRecord
	var was *Rewind
	err := l.recordFile("tip", &rec, func() bool {
		was, rec.Rewind = rec.Rewind, nil
		return was != nil
	})
	return was, err
}

func short(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
}

// lockedRecord is the lease refs a claim on this machine found locked on
// the remote: slug to when and what the remote said.
type lockedRecord struct {
	Refs map[string]LockedRef `json:"refs"`
}

// LockedRef is one lease ref found locked.
type LockedRef struct {
	At     time.Time `json:"at"`
	Detail string    `json:"detail"`
}

// noteLocked remembers that ref stayed locked, for check; failing to is
// not an error, the claim already says why.
func (l *Lanes) noteLocked(ref, detail string) {
	slug, ok := strings.CutPrefix(ref, LeaseRefs)
	if !ok {
		return
	}
	var rec lockedRecord
	_ = l.recordFile("locked", &rec, func() bool {
		if rec.Refs == nil {
			rec.Refs = map[string]LockedRef{}
		}
		rec.Refs[slug] = LockedRef{At: time.Now(), Detail: detail}
		return true
	})
}

// Locked is the lease refs claims on this machine found locked and not
// written since, by slug.
func (l *Lanes) Locked() (map[string]LockedRef, error) {
	var rec lockedRecord
	err := l.recordFile("locked", &rec, func() bool { return false })
	return rec.Refs, err
}

// unlocked forgets a lock on ref once a push of it took; a stat when there
// is no record, which is almost always.
func (l *Lanes) unlocked(ref string) {
	slug, ok := strings.CutPrefix(ref, LeaseRefs)
	if !ok {
		return
	}
	if _, err := os.Stat(filepath.Join(l.project, l.recordPath("locked"))); err != nil {
		return
	}
	var rec lockedRecord
	_ = l.recordFile("locked", &rec, func() bool {
		if _, ok := rec.Refs[slug]; !ok {
			return false
		}
		delete(rec.Refs, slug)
		return true
	})
}
