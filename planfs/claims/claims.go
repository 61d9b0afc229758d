// Package claims owns who holds which plan when a fleet spans machines: the
// one interface every claims backend meets (the git remote's lease refs,
// etcd keys; the local lease files stay planfs's own), the registry that
// opens the one fleetwatch.yaml names, and the overlay that shows remote
// leases to the pure rules as in-progress plans.
package claims

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// Backend is one place claims are kept. Every verb carries the fencing
// token (Held.Lease.Token) and the compare-and-swap value (Held.Version) of
// the holder: a verb on a lease that changed since is refused with ErrLost.
type Backend interface {
	// Name is its Description's Name.
	Name() string
	// View reads the lanes and every lease in one go (git: one fetch).
	View(ctx context.Context) (*View, error)
	// Claim takes rel, a ready plan of v, for h. A lost race is ErrLost:
	// the caller reads again and tries its next pick.
	Claim(ctx context.Context, v *View, rel string, h Holder, ttl time.Duration) (Held, error)
	// Renew is the heartbeat: a new lease over held's, CAS on its
	// Version. ErrLost means the lease is gone or someone else's.
	Renew(ctx context.Context, held Held, ttl time.Duration) (Held, error)
	// TakeOver is recover: slug's expired lease in v becomes h's. A lease
	// not yet seen expired is a *TooEarlyError.
	TakeOver(ctx context.Context, v *View, slug string, h Holder, ttl time.Duration) (Held, error)
	// Release drops held's lease, CAS on its Version; the plan stays in
	// its ready lane, free again.
	Release(ctx context.Context, held Held, reason string) error
	// Complete moves held's plan to lane on the integration branch and
	// drops the lease, as one step where the backend allows (git: one
	// atomic push). It returns the plan's new rel.
	Complete(ctx context.Context, held Held, to model.Lane) (string, error)
	// MovePlan moves rel to lane on the integration branch for a verb that
	// holds no lease (park, promote, return), by the agent or operator by,
	// for the reason why ("" when none was given).
	MovePlan(ctx context.Context, rel string, to model.Lane, by, why string) (string, error)
	// PushBranch pushes held's branch to the project's git remote only
	// while held's lease is still its: as one atomic push with a renewal
	// of the lease where the lease lives in git, else checked against the
	// lease just before. It returns the lease as it now stands. ErrLost:
	// the lease moved, and nothing was pushed; ErrBranchMoved: the branch
	// is not at u.Old, and nothing was pushed.
	PushBranch(ctx context.Context, held Held, u BranchUpdate) (Held, error)
	// MoveHeld moves held's plan to lane and drops its lease, as one step
	// where the backend allows (git: one atomic push), for an operator's
	// verb on a leased plan (park, return, complete) by by, for why: the
	// plan is never moved and still leased, nor free in the lane it leaves.
	MoveHeld(ctx context.Context, held Held, to model.Lane, by, why string) (string, error)
	// Close ends the backend's session (etcd: its lease and connection).
	Close() error
}

// BranchUpdate is a holder's branch pushed to the git remote: Ref (fully
// qualified) from Old, the value this holder last pushed or started from
// ("" = the remote has no such branch), to New. It never overwrites what
// anyone else pushed there since.
type BranchUpdate struct {
	Ref, Old, New string
}

// Opened is a backend as the faces hold it; Where names it for a header
// ("git origin", "etcd 10.0.0.5:2379").
type Opened struct {
	Backend Backend
	Where   string
}

// ReadEvery is how often a face reads a backend again when nothing else
// says it changed (git's fetch; etcd's watch has it as a fallback).
const ReadEvery = 10 * time.Second

// Glancer is a backend with a cheaper read for picking the next plan: the
// leases as they are now, with holders it has not read left unknown (a
// leased plan is not picked whoever holds it). Claim takes its views.
type Glancer interface {
	Glance(ctx context.Context) (*View, error)
}

// Holder is who claims: the agent, where it runs, and what it runs as
// (written into its leases for the caps to count).
type Holder struct {
	AgentID string
	Host    string
	PID     int
	RunsAs  model.RunsAs
}

// Held is a lease this process holds, as its backend last wrote it.
type Held struct {
	Slug string
	// Rel is the plan as the view saw it, in its ready lane (plans are not
	// moved at claim time).
	Rel string
	// Lease is what the backend holds; Lease.Token is the fencing token.
	Lease model.Lease
	// Version is the compare-and-swap value: the lease ref's commit (git),
	// the key's mod revision (etcd).
	Version string
	// Renewed is when the last successful claim or renewal began, on the
	// monotonic clock: the holder stops work once TTL minus one heartbeat
	// has passed since, whatever any wall clock says.
	Renewed time.Time
}

// Remote is one lease as a read of a backend saw it.
type Remote struct {
	model.Lease
	Slug    string
	Version string
	// SeenFor is how long this machine has seen Version unchanged (git);
	// 0 for etcd, whose server expires leases itself.
	SeenFor time.Duration
	// Need is how long it must be seen unchanged before a takeover: TTL
	// plus Grace (git); 0 for etcd.
	Need time.Duration
	// Live reports whether the lease holds by its backend's rule.
	Live bool
}

// View is the lanes and leases as one read of a backend saw them.
type View struct {
	// Snapshot is the lanes with every remote lease overlaid (Overlay).
	Snapshot *model.Snapshot
	Leases   []Remote
	// Tip is the integration branch commit the lanes were read at.
	Tip string
	// ReadAt is when the read was made: faces say how old their view is.
	ReadAt time.Time
}

// Lease returns slug's lease in v, or nil.
func (v *View) Lease(slug string) *Remote {
	for i := range v.Leases {
		if v.Leases[i].Slug == slug {
			return &v.Leases[i]
		}
	}
	return nil
}

// HeldFrom finds the lease agent holds on slug in v, for a one-shot verb
// (heartbeat, release) run in a new process: token, when given, must match
// too.
func HeldFrom(v *View, slug, agent, token string) (Held, error) {
	r := v.Lease(slug)
	switch {
	case r == nil:
		return Held{}, fmt.Errorf("%s: %w", slug, ErrNoLease)
	case r.AgentID != agent:
		return Held{}, fmt.Errorf("%s: lease held by %s, not %s: %w", slug, r.AgentID, agent, ErrNotHolder)
	case token != "" && r.Token != token:
		return Held{}, fmt.Errorf("%s: held by %s under a newer lease (recovered or claimed again since); this one is lost: %w", slug, agent, ErrNotHolder)
	}
	return Held{Slug: slug, Rel: r.Origin, Lease: r.Lease, Version: r.Version, Renewed: time.Now()}, nil
}

// Errors of the verbs; a backend wraps them with the cause.
var (
	// ErrLost is a compare-and-swap that did not take: another worker won
	// the race, or the lease changed since it was read.
	ErrLost = errors.New("lost the race")
	// ErrNoLease is a verb on a plan nobody holds.
	ErrNoLease = errors.New("no lease")
	// ErrNotHolder is a verb on someone else's lease.
	ErrNotHolder = errors.New("not the holder")
	// ErrUnavailable is a backend that cannot answer: an unreachable
	// remote, a leftover lock, a refused ref namespace. Nothing was
	// claimed; exit 2.
	ErrUnavailable = errors.New("claims backend unavailable")
	// ErrBranchMoved is a branch push refused because the remote's branch
	// is no longer where this holder last saw it: someone else pushed
	// there, and their commits are not overwritten.
	ErrBranchMoved = errors.New("the branch moved on the remote")
	// ErrNotBuilt is a backend this binary was built without.
	ErrNotBuilt = errors.New("not built into this fleetwatch")
	// ErrLocked is one plan's lease that cannot be written for now (git: a
	// lock left on its lease ref on the remote): that plan is skipped,
	// and the others are still claimable.
	ErrLocked = errors.New("lease locked on the backend")
)

// TooEarlyError is a takeover of a lease not yet seen unchanged for long
// enough.
type TooEarlyError struct {
	Slug       string
	Seen, Need time.Duration
}

func (e *TooEarlyError) Error() string {
	return fmt.Sprintf("%s: lease seen unchanged for %s of the %s a takeover needs", e.Slug, e.Seen.Round(time.Second), e.Need.Round(time.Second))
}

// Grace is how long past a lease's TTL an observer waits before a takeover:
// a tenth of it, between 1 s and a minute, for a holder whose renewal is
// on its way.
func Grace(ttl time.Duration) time.Duration {
	return min(max(ttl/10, time.Second), time.Minute)
}

// DefaultTTL and DefaultHeartbeat fit a remote: a push every five minutes,
// a lease that outlives two lost ones.
const (
	DefaultTTL       = 15 * time.Minute
	DefaultHeartbeat = 5 * time.Minute
)

// Config is what opening a backend needs.
type Config struct {
	// Backend is the Description.Name of the backend to open.
	Backend string
	// Project is the project root (a git checkout).
	Project string
	// Integration is the branch lanes are read from and moved on.
	Integration string
	// Remote is the git remote (git; default origin).
	Remote string
	// Endpoints are etcd client URLs (etcd).
	Endpoints []string
	// ProjectID is the etcd key prefix's project id ("" = the
	// integration branch's root commit).
	ProjectID string
	// Timeout bounds each remote operation; 0 means 30 s.
	Timeout time.Duration
}

// Overlay returns snap with leases shown as the local engine would show
// them: a ready plan whose slug has a lease is in in-progress, holding that
// lease, so every rule and face treats it as claimed. A lease not Live is
// shown expired at now (recoverable, never picked). snap is not changed.
func Overlay(snap *model.Snapshot, leases []Remote, now float64) *model.Snapshot {
	if len(leases) == 0 {
		return snap
	}
	bySlug := make(map[string]*Remote, len(leases))
	for i := range leases {
		bySlug[leases[i].Slug] = &leases[i]
	}
	out := *snap
	out.Plans, out.Leases = make([]model.Plan, len(snap.Plans)), append([]model.Lease(nil), snap.Leases...)
	copy(out.Plans, snap.Plans)
	for i := range out.Plans {
		p := &out.Plans[i]
		r := bySlug[p.Slug]
		if r == nil || !p.Lane.Ready() {
			continue
		}
		origin := p.Rel
		p.Lane = model.InProgress
		p.Rel = string(model.RelOf(model.InProgress, p.Name))
		l := r.Lease
		// Origin is where the plan is on the branch, whatever the lease
		// says it was claimed from: verbs move it from there.
		l.Rel, l.Plan, l.Backend, l.Origin = p.Rel, p.Rel, r.Backend, origin
		l.ExpiresAt = now + remaining(r).Seconds()
		if !r.Live {
			l.ExpiresAt = min(l.ExpiresAt, now-1)
		}
		l.Awaiting = ""
		out.Leases = append(out.Leases, l)
	}
	return &out
}

// remaining is how long r still holds as its backend counts: the rest of
// TTL plus grace since it was first seen unchanged (git), its TTL (etcd).
func remaining(r *Remote) time.Duration {
	if r.Need > 0 {
		return max(r.Need-r.SeenFor, 0)
	}
	return time.Duration(r.TTL * float64(time.Second))
}

// Watcher is a backend that says when its leases change (etcd), so faces
// update without polling; a backend without it is read again on a timer.
type Watcher interface {
	// Changes receives after each change, until ctx ends.
	Changes(ctx context.Context) <-chan struct{}
}

// Sessioner is a backend whose claims can live on one session kept alive
// while the process runs (etcd): a dead worker's claims then vanish by
// themselves. A `--run` worker starts one before it claims; a claim-only
// run does not, and its leases live on --lease-ttl and --heartbeat.
type Sessioner interface {
	StartSession(ctx context.Context, ttl time.Duration) error
}

// spreadWidth is how many of the first picks a worker that lost a race
// chooses among: with eight workers racing, 8 lost 0.6–0.75 races per
// claim, 16 lost 0.3–0.4 (BenchmarkClaimRace).
const spreadWidth = 16

// Next is the pick a worker tries after losing lost races in a row: the
// first pick while it has lost none (a quiet tree gives the same pick every
// time), then one of the first few chosen by its agent id, so a fleet's
// losers stop all racing for the same next plan — a remote serialises
// every push, and eight workers chasing one ref make one claim per round.
func Next(picks []*model.Row, agent string, lost int) *model.Row {
	if len(picks) == 0 {
		return nil
	}
	if lost == 0 {
		return picks[0]
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%d", agent, lost)
	return picks[int(h.Sum32()%uint32(min(len(picks), spreadWidth)))]
}

// ValidTTL refuses a lease lifetime under a second: no backend can keep
// a lease that short alive across a round trip.
func ValidTTL(ttl time.Duration) error {
	if ttl < time.Second {
		return fmt.Errorf("lease TTL must be at least a second, not %v", ttl)
	}
	return nil
}

// Nonce is a random word for a lease's token and nonce fields.
func Nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
