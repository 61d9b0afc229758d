// Package coalesce merges bursts of file-system events into few wakeups,
// for the watchers in planfs and workers: a quiet-period timer, and a send
// that keeps only the newest value for a slow reader.
package coalesce

import "time"

// Send puts v in ch, a channel of capacity one, without ever blocking: a
// value still waiting there is replaced, so the reader sees the latest.
func Send[T any](ch chan T, v T) {
	for {
		select {
		case ch <- v:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}

// Burst fires once events stop for a quiet period, and at the latest four
// quiet periods after the first event of the burst, so a steady stream
// still wakes the reader.
type Burst struct {
	quiet time.Duration
	timer *time.Timer
	start time.Time // first event of the pending burst; zero when none
}

// NewBurst is a Burst with nothing pending.
func NewBurst(quiet time.Duration) *Burst {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &Burst{quiet: quiet, timer: t}
}

// C fires when a burst is over; call Fired then.
func (b *Burst) C() <-chan time.Time { return b.timer.C }

// Event records an event at now.
func (b *Burst) Event(now time.Time) {
	if b.start.IsZero() {
		b.start = now
	}
	b.timer.Reset(min(b.quiet, b.start.Add(4*b.quiet).Sub(now)))
}

// Fired ends the burst that C reported.
func (b *Burst) Fired() { b.start = time.Time{} }

// Cancel drops a pending burst without firing.
func (b *Burst) Cancel() {
	b.start = time.Time{}
	b.timer.Stop()
}
