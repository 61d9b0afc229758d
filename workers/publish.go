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
// obeys as a local stop, and a person's messages for the run, which the
// driver reads from fleetMail. The lease files publish nothing: the state files
// are this machine's view already.
//
// A publish is a push (git) or a transaction (etcd) to a remote that may
// be slow: it runs on a goroutine of its own, so it never holds up the
// driver's loop, whose lease renewals must not wait on it. Where the
// backend says when something was written for the worker
// (claims.MailWatcher), the sender publishes the newest record again
// then, so a message or a stop does not wait for the next heartbeat.

// fleetPub is a driver's publishing: where, as which run, its sender, a
// stop request once one came, and the messages come for the run.
type fleetPub struct {
	f   claims.Fleet
	run string  // this driver's run: a stop request names it
	ttl float64 // the lease's TTL in seconds: readers call a record silent that long dead
	log *look.Log

	next  chan claims.WorkerRecord // 1-buffered: the newest record not yet sent
	sent  chan struct{}            // closed when the sender has ended
	stops chan string              // 1-buffered: the stop request, once
	pokes <-chan struct{}          // something was written for the worker (nil: never said)
	quiet context.CancelFunc       // ends the watch that pokes
	mu    sync.Mutex
	stop  string // why the driver was asked to stop, once it was
	said  string // the last publish failure logged, so each is said once

	// mail carries each message once, in the order heard, to the driver;
	// only forward sends on it. queue holds what it has not taken yet:
	// a driver slow to read holds up no publish and loses nothing.
	mail   chan claims.Message
	queue  []claims.Message // guarded by mu
	wake   chan struct{}    // 1-buffered: queue grew
	heard  map[string]bool  // the ids of the last maxHeard messages handed on
	order  []string         // those ids, oldest first
	mailed string           // the last mail problem logged
}

// mailBuffer is how many messages wait in the channel for the driver;
// maxHeard how many ids the sender remembers to drop a message heard again
// (delivery is at least once; a repeat comes within a few publishes, and at
// most claims.MaxMail wait at once).
const (
	mailBuffer = 32
	maxHeard   = 256
)

// publishTimeout bounds one publish: a slow remote misses a publish, and
// the next record waits at most this long behind it.
const publishTimeout = 10 * time.Second

// PublishTo makes the driver publish its record through f from now on,
// starting now; ttl is its leases' lifetime.
func (d *Driver) PublishTo(f claims.Fleet, ttl time.Duration) {
	p := &fleetPub{f: f, run: claims.Nonce(), ttl: ttl.Seconds(), log: d.Log,
		next: make(chan claims.WorkerRecord, 1), sent: make(chan struct{}), stops: make(chan string, 1),
		mail: make(chan claims.Message, mailBuffer), wake: make(chan struct{}, 1), heard: map[string]bool{}}
	d.fleet = p
	ctx, cancel := context.WithCancel(context.Background())
	p.quiet = cancel
	if w, ok := f.(claims.MailWatcher); ok {
		rec := d.record()
		p.pokes = w.MailChanges(ctx, rec.Host, rec.AgentID)
	}
	go p.send()
	go p.forward()
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

// fleetMail receives each message a person sent this run, once, in the
// order they were heard; nil (never) when the driver publishes nothing.
// Messages not read wait, in order, however long the driver takes.
func (d *Driver) fleetMail() <-chan claims.Message {
	if d.fleet == nil {
		return nil
	}
	return d.fleet.mail
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
// during one publish, and the newest again when poked.
func (p *fleetPub) send() {
	defer close(p.sent)
	defer p.quiet()
	var last claims.WorkerRecord
	have := false
	for {
		select {
		case rec, ok := <-p.next:
			if !ok {
				return
			}
			last, have = rec, true
		case _, ok := <-p.pokes:
			if !ok {
				p.pokes = nil // the watch ended: heartbeats still publish
				continue
			}
			if !have {
				continue
			}
		}
		p.sendOne(last)
	}
}

// sendOne publishes rec and takes in what came back: a stop, mail.
func (p *fleetPub) sendOne(rec claims.WorkerRecord) {
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	in, err := p.f.Publish(ctx, rec)
	cancel()
	req := in.Stop
	p.hear(in)
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

// record is the state file as published: plain fields, the log's last line
// and where the log is, and this host's serve address when it runs one.
func (d *Driver) record() claims.WorkerRecord {
	st := &d.state
	rec := claims.WorkerRecord{
		AgentID: st.AgentID, Host: st.Host, Tier: st.Tier, Endpoint: st.Endpoint, Model: st.Model, Plan: st.Plan,
		State: st.State, ExitCode: st.ExitCode, Run: d.fleet.run, PID: st.PID,
		Started: look.UnixSeconds(st.Started.Time), Heartbeat: look.UnixSeconds(st.LastHeartbeat.Time),
		HeartbeatEvery: st.HeartbeatEvery, TTL: d.fleet.ttl, Tokens: st.Spent.Tokens, Cost: st.Spent.USD,
		Paused: st.Paused, Note: st.Note, Serve: look.ServeAddress(d.Tree.Project), Asking: st.Asking,
	}
	if d.Log != nil {
		rec.LastLine, rec.LogPath = d.Log.Last(), d.Log.Path
	}
	if rec.State != look.StateExited {
		rec.State = claims.WorkerRunning
	}
	return rec.Bounded()
}

// hear queues the messages of in not heard before for forward, and logs a
// mailbox that could not be read, once.
func (p *fleetPub) hear(in claims.Inbound) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in.Problem != "" && in.Problem != p.mailed {
		p.mailed = in.Problem
		p.log.Printf("the messages for this run could not be read: %s", in.Problem)
	}
	grew := false
	for _, m := range in.Mail {
		if p.heard[m.ID] {
			continue
		}
		p.heard[m.ID] = true
		p.order = append(p.order, m.ID)
		if len(p.order) > maxHeard {
			delete(p.heard, p.order[0])
			p.order = p.order[1:]
		}
		p.log.Printf("%s from %s on %s (through the claims backend)", m.Kind, m.By, cmp.Or(m.Host, "another host"))
		p.queue = append(p.queue, m)
		grew = true
	}
	if grew {
		select {
		case p.wake <- struct{}{}:
		default: // a wake is pending: forward will see the whole queue
		}
	}
}

// forward hands the queued messages to the driver in order, blocking on
// a full channel (only the driver's reading holds it up), until the
// sender ends: the run is over then, and what is left has nowhere to go.
func (p *fleetPub) forward() {
	for {
		select {
		case <-p.wake:
		case <-p.sent:
			return
		}
		for {
			p.mu.Lock()
			if len(p.queue) == 0 {
				p.mu.Unlock()
				break
			}
			m := p.queue[0]
			p.mu.Unlock()
			select {
			case p.mail <- m:
			case <-p.sent:
				return
			}
			p.mu.Lock()
			p.queue = p.queue[1:]
			p.mu.Unlock()
		}
	}
}
