package workers

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// A driver whose claims live in a remote backend publishes its worker's
// record through it (claims.Fleet) when it claims, at each heartbeat and
// when it finishes, so a cockpit on any machine sees it; the record also
// carries back a stop request another machine wrote, which the driver
// obeys as a local stop. The lease files publish nothing: the state files
// are this machine's view already.
//
// A publish is a push (git) or a transaction (etcd) to a remote that may
// be slow: it runs on a goroutine of its own, so it never holds up the
// driver's loop, whose lease renewals must not wait on it.

// fleetPub is a driver's publishing: where, as which run, its sender, and
// a stop request once one came.
type fleetPub struct {
	f   claims.Fleet
	run string  // this driver's run: a stop request names it
	ttl float64 // the lease's TTL in seconds: readers call a record silent that long dead
	log *look.Log

	next  chan claims.WorkerRecord // 1-buffered: the newest record not yet sent
	sent  chan struct{}            // closed when the sender has ended
	stops chan string              // 1-buffered: the stop request, once
	mu    sync.Mutex
	stop  string // why the driver was asked to stop, once it was
	said  string // the last publish failure logged, so each is said once
}

// publishTimeout bounds one publish: a slow remote misses a publish, and
// the next record waits at most this long behind it.
const publishTimeout = 10 * time.Second

// PublishTo makes the driver publish its record through f from now on,
// starting now; ttl is its leases' lifetime.
func (d *Driver) PublishTo(f claims.Fleet, ttl time.Duration) {
	p := &fleetPub{f: f, run: claims.Nonce(), ttl: ttl.Seconds(), log: d.Log,
		next: make(chan claims.WorkerRecord, 1), sent: make(chan struct{}), stops: make(chan string, 1)}
	d.fleet = p
	go p.send()
	d.publish()
}

// publish hands the record as the state file now says to the sender,
// in place of one still waiting; it returns why to stop when someone on
// another machine asked this run to (fleetStops says so as it comes).
func (d *Driver) publish() (stop string) {
	p := d.fleet
	if p == nil {
		return ""
	}
	rec := d.record()
	// Only this goroutine puts: after the drain there is room.
	select {
	case <-p.next:
	default:
	}
	p.next <- rec
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stop
}

// fleetStops says once when another machine asked this run to stop; nil
// (never) when the driver publishes nothing.
func (d *Driver) fleetStops() <-chan string {
	if d.fleet == nil {
		return nil
	}
	return d.fleet.stops
}

// endPublishing sends the last record handed over and ends the sender,
// waiting at most one publish for it.
func (d *Driver) endPublishing() {
	p := d.fleet
	if p == nil {
		return
	}
	d.fleet = nil // a later publish has no sender
	close(p.next)
	select {
	case <-p.sent:
	case <-time.After(publishTimeout + time.Second):
		d.Log.Printf("the last record was not published in %v; readers will see this worker go silent", publishTimeout)
	}
}

// send publishes each record handed over, the newest when several came
// during one publish.
func (p *fleetPub) send() {
	defer close(p.sent)
	for rec := range p.next {
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		req, err := p.f.Publish(ctx, rec)
		cancel()
		p.mu.Lock()
		if err != nil && tree.ErrText(err) != p.said {
			p.said = tree.ErrText(err)
			p.log.Printf("could not publish this worker's record, will retry: %s", p.said)
		}
		if req != nil && p.stop == "" {
			p.stop = fmt.Sprintf("stop asked by %s on %s", req.By, cmp.Or(req.Host, "another host"))
			p.log.Printf("%s (through the claims backend)", p.stop)
			p.stops <- p.stop
		}
		p.mu.Unlock()
	}
}

// record is the state file as published: plain fields, the log's last line
// and where the log is, and this host's serve address when it runs one.
func (d *Driver) record() claims.WorkerRecord {
	st := &d.state
	rec := claims.WorkerRecord{
		AgentID: st.AgentID, Host: st.Host, Tier: st.Tier, Endpoint: st.Endpoint, Model: st.Model, Plan: st.Plan,
		State: st.State, ExitCode: st.ExitCode, Run: d.fleet.run, PID: st.PID,
		Started: look.UnixSeconds(st.Started.Time), Heartbeat: look.UnixSeconds(st.LastHeartbeat.Time),
		HeartbeatEvery: st.HeartbeatEvery, TTL: d.fleet.ttl, Tokens: st.Spent.Tokens, Cost: st.Spent.USD,
		Paused: st.Paused, Note: st.Note, Serve: look.ServeAddress(d.Tree.Project),
	}
	if d.Log != nil {
		rec.LastLine, rec.LogPath = d.Log.Last(), d.Log.Path
	}
	if rec.State != look.StateExited {
		rec.State = claims.WorkerRunning
	}
	return rec.Bounded()
}
