package coalesce

import (
	"testing"
	"time"
)

func TestSendKeepsTheNewest(t *testing.T) {
	ch := make(chan int, 1)
	Send(ch, 1)
	Send(ch, 2)
	if got := <-ch; got != 2 {
		t.Fatalf("got %d, want the newest", got)
	}
	select {
	case v := <-ch:
		t.Fatalf("a second value %d waited", v)
	default:
	}
}

func TestBurstFiresDuringASteadyStream(t *testing.T) {
	b := NewBurst(40 * time.Millisecond)
	// Events every 10 ms never leave 40 ms of quiet; the burst still fires
	// by four quiet periods after its first event.
	stop := time.After(400 * time.Millisecond)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	b.Event(time.Now())
	for {
		select {
		case <-tick.C:
			b.Event(time.Now())
		case <-b.C():
			b.Fired()
			return
		case <-stop:
			t.Fatal("a steady stream of events never fired")
		}
	}
}

func TestBurstCancel(t *testing.T) {
	b := NewBurst(10 * time.Millisecond)
	b.Event(time.Now())
	b.Cancel()
	select {
	case <-b.C():
		t.Fatal("a cancelled burst fired")
	case <-time.After(50 * time.Millisecond):
	}
}
