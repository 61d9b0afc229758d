package converse

import (
	"sync"
	"time"
)

// Bounds of the outbox.
const (
	sjOutboxQueued = 256             // events queued before the reader waits
	sjOutboxGrace  = 5 * time.Second // after Close, how long an event waits for the driver
)

// sjOutbox is a stream-json conversation's Events: the reader and the methods add in
// order, one goroutine hands them to the driver. Adding never blocks (a
// method holding the conversation's lock adds its TurnStarted, so it
// comes before what the turn does); the reader waits afterwards, in
// wait, while the driver lags more than sjOutboxQueued behind, so the
// agent waits on its stdout rather than the conversation growing without
// bound. After stop (Close) nothing waits on the driver for long.
type sjOutbox struct {
	out  chan Event
	wake chan struct{} // cap 1: something was added or it ended
	room chan struct{} // cap 1: the queue shrank
	quit chan struct{} // closed by stop
	once sync.Once

	mu    sync.Mutex
	queue []Event
	ended bool
}

func newSJOutbox() *sjOutbox {
	o := &sjOutbox{out: make(chan Event), wake: make(chan struct{}, 1), room: make(chan struct{}, 1), quit: make(chan struct{})}
	go o.pump()
	return o
}

func sjPoke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// add queues e, stamped now.
func (o *sjOutbox) add(e Event) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	o.mu.Lock()
	if !o.ended {
		o.queue = append(o.queue, e)
	}
	o.mu.Unlock()
	sjPoke(o.wake)
}

// wait returns once the driver is at most sjOutboxQueued events behind, or
// the conversation was closed.
func (o *sjOutbox) wait() {
	for {
		o.mu.Lock()
		n := len(o.queue)
		o.mu.Unlock()
		if n <= sjOutboxQueued {
			return
		}
		select {
		case <-o.room:
		case <-o.quit:
			return
		}
	}
}

// end closes Events once what is queued is handed over.
func (o *sjOutbox) end() {
	o.mu.Lock()
	o.ended = true
	o.mu.Unlock()
	sjPoke(o.wake)
}

// stop stops waiting on the driver: the conversation was closed.
func (o *sjOutbox) stop() { o.once.Do(func() { close(o.quit) }) }

func (o *sjOutbox) pump() {
	defer close(o.out)
	for {
		o.mu.Lock()
		if len(o.queue) == 0 {
			ended := o.ended
			o.mu.Unlock()
			if ended {
				return
			}
			<-o.wake
			continue
		}
		e := o.queue[0]
		o.queue[0] = Event{}
		o.queue = o.queue[1:]
		o.mu.Unlock()
		sjPoke(o.room)
		if !o.deliver(e) {
			o.mu.Lock()
			o.ended, o.queue = true, nil
			o.mu.Unlock()
			return
		}
	}
}

// deliver hands e to the driver; false when, closed, it did not take it
// within sjOutboxGrace.
func (o *sjOutbox) deliver(e Event) bool {
	select {
	case o.out <- e:
		return true
	case <-o.quit:
	}
	t := time.NewTimer(sjOutboxGrace)
	defer t.Stop()
	select {
	case o.out <- e:
		return true
	case <-t.C:
		return false
	}
}
