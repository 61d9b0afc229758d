package serve

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuf is a terminal's output, written by the screen's timer.
type lockedBuf struct {
	mu     sync.Mutex
	b      strings.Builder
	writes int
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

func (l *lockedBuf) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	l.b.Reset()
	return s
}

// A screen writes a frame once, then only the lines that change; a frame
// equal to the last writes nothing, and it never writes between frames.
func TestScreenWritesOnlyChanges(t *testing.T) {
	t.Parallel()
	out := &lockedBuf{}
	s := newScreen(out, frameRate)
	s.resize(20, 3)
	settle := func() string {
		time.Sleep(3 * time.Second / frameRate)
		return out.take()
	}
	s.show("head\nbody one\nfoot")
	if got := settle(); !strings.Contains(got, "head") || !strings.Contains(got, "body one") || !strings.Contains(got, "foot") {
		t.Fatalf("the first frame wrote %q", got)
	}
	s.show("head\nbody one\nfoot")
	if got := settle(); got != "" {
		t.Fatalf("the same frame again wrote %q", got)
	}
	s.show("head\nbody two\nfoot")
	if got := settle(); !strings.Contains(got, "body two") || strings.Contains(got, "head") || strings.Contains(got, "foot") {
		t.Fatalf("a frame with one line changed wrote %q", got)
	}
	s.resize(30, 3)
	s.show("head\nbody two\nfoot")
	if got := settle(); !strings.Contains(got, "head") || !strings.Contains(got, "foot") {
		t.Fatalf("after a resize the frame wrote %q, not the whole of it", got)
	}
	s.close()
	s.show("late")
	if got := settle(); strings.Contains(got, "late") {
		t.Fatalf("a closed screen wrote %q", got)
	}
}

// Frames coming faster than frameRate are written at most frameRate times
// a second, the newest each time.
func TestScreenCoalesces(t *testing.T) {
	t.Parallel()
	out := &lockedBuf{}
	s := newScreen(out, 10)
	s.resize(20, 1)
	start := time.Now()
	for i := range 50 {
		s.show("frame " + strings.Repeat("x", i%7))
		time.Sleep(2 * time.Millisecond)
	}
	s.show("last")
	took := time.Since(start)
	time.Sleep(250 * time.Millisecond)
	got := out.take()
	if n, most := out.writes, int(took/(100*time.Millisecond))+2; n > most {
		t.Errorf("50 frames in %v were written %d times, more than 10 a second", took, n)
	}
	if !strings.Contains(got, "last") {
		t.Errorf("the newest frame was not written: %q", got)
	}
}
