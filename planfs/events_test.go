package planfs

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// eventLine is one log line for event i, about 200 bytes like real ones;
// formatted by hand because a 50 MB log of json.Marshal is slow under -race.
func eventLine(i int) []byte {
	return fmt.Appendf(nil, `{"ts":"2026-01-02T03:04:05.%09dZ","event":"claim","slug":"plan-%d","from":"features/plan-%d.md","to":"in-progress/plan-%d.md","agent_id":"mid-1"}`+"\n", i, i, i, i)
}

// writeLog writes lines events (0 oldest) to tr's event log and returns its
// size. Only the newest thousand are numbered; the rest repeat event 0, which
// keeps writing 50 MB quick.
func writeLog(t testing.TB, tr *Tree, lines int) int64 {
	t.Helper()
	head := max(lines-1000, 0)
	buf := bytes.NewBuffer(bytes.Repeat(eventLine(0), head))
	for i := head; i < lines; i++ {
		buf.Write(eventLine(i))
	}
	p := filepath.Join(tr.Plans, EventsFile)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return int64(buf.Len())
}

func slugs(events []Event) string {
	var s []string
	for _, e := range events {
		s = append(s, e.Slug)
	}
	return strings.Join(s, " ")
}

func TestRecentEvents(t *testing.T) {
	tr := mkTree(t)
	if got, err := tr.RecentEvents(5); err != nil || got != nil {
		t.Fatalf("no log: %v %v", got, err)
	}
	for i := range 5 {
		tr.appendEvent(Event{Event: "claim", Slug: fmt.Sprint("s", i)})
	}
	p := filepath.Join(tr.Plans, EventsFile)
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("not json\n\n")
	f.Write(eventLine(99)[:50]) // being written: no newline yet
	f.Close()

	got, err := tr.RecentEvents(3)
	if err != nil || slugs(got) != "s4 s3 s2" {
		t.Fatalf("RecentEvents(3): %q %v", slugs(got), err)
	}
	all, _ := tr.RecentEvents(100)
	old, _ := tr.Events()
	slices.Reverse(old)
	if slugs(all) != "s4 s3 s2 s1 s0" || slugs(all) != slugs(old) {
		t.Fatalf("RecentEvents(100) %q, Events reversed %q", slugs(all), slugs(old))
	}
	if got, _ := tr.RecentEvents(0); got != nil {
		t.Fatalf("RecentEvents(0): %v", got)
	}
}

// Every chunk size puts line and chunk boundaries everywhere relative to
// each other.
func TestRecentEventsChunkBoundaries(t *testing.T) {
	var log []byte
	var want []string
	for i := range 12 {
		log = append(log, eventLine(i)...)
		want = append(want, fmt.Sprint("plan-", i))
		if i%4 == 1 {
			log = append(log, "{broken\n\n"...)
		}
	}
	slices.Reverse(want)
	withPartial := append(slices.Clip(log), `{"slug":"half`...)
	chunks := []int{100, 171, 250, 4096}
	for c := 1; c <= 64; c++ {
		chunks = append(chunks, c)
	}
	for _, chunk := range chunks {
		for _, data := range [][]byte{log, withPartial} {
			for _, n := range []int{1, 5, 12, 50} {
				got, err := recentEvents(bytes.NewReader(data), int64(len(data)), n, chunk)
				if err != nil || slugs(got) != strings.Join(want[:min(n, len(want))], " ") {
					t.Fatalf("chunk %d, n %d: %q %v", chunk, n, slugs(got), err)
				}
			}
		}
	}
}

func TestRecentEventsSkipsOverlongLines(t *testing.T) {
	var log []byte
	log = append(log, eventLine(1)...)
	log = append(log, bytes.Repeat([]byte("x"), 3*maxEventLine)...)
	log = append(log, '\n')
	log = append(log, eventLine(2)...)
	got, err := recentEvents(bytes.NewReader(log), int64(len(log)), 10, eventsChunk)
	if err != nil || slugs(got) != "plan-2 plan-1" {
		t.Fatalf("around an overlong line: %q %v", slugs(got), err)
	}
	// A huge partial last line is skipped the same way.
	log = append(log, bytes.Repeat([]byte("y"), 2*maxEventLine)...)
	got, _ = recentEvents(bytes.NewReader(log), int64(len(log)), 10, eventsChunk)
	if slugs(got) != "plan-2 plan-1" {
		t.Fatalf("under an overlong partial line: %q", slugs(got))
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// The log grows without bound; the newest 200 events of 50 MB must cost
// what they cost on a fresh log.
func TestRecentEventsReadsOnlyTheTail(t *testing.T) {
	tr := mkTree(t)
	lines := 50 << 20 / len(eventLine(0))
	size := writeLog(t, tr, lines)
	got, err := tr.RecentEvents(200)
	if err != nil || len(got) != 200 || got[0].Slug != fmt.Sprint("plan-", lines-1) || got[199].Slug != fmt.Sprint("plan-", lines-200) {
		t.Fatalf("RecentEvents(200) of %d lines: %d events, first %+v, %v", lines, len(got), got[0], err)
	}
	f, err := os.Open(filepath.Join(tr.Plans, EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := &countingReader{r: f}
	if _, err := recentEvents(cr, size, 200, eventsChunk); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d MB log: RecentEvents(200) read %d bytes", size>>20, cr.n.Load())
	if cr.n.Load() > 2*eventsChunk {
		t.Fatalf("read %d bytes of a %d-byte log for 200 events", cr.n.Load(), size)
	}
}

func BenchmarkRecentEvents(b *testing.B) {
	tr := mkTree(b)
	size := writeLog(b, tr, 100_000)
	b.Logf("log of 100k lines, %d MB", size>>20)
	b.ReportAllocs()
	for b.Loop() {
		if got, err := tr.RecentEvents(200); err != nil || len(got) != 200 {
			b.Fatalf("%d events, %v", len(got), err)
		}
	}
}
