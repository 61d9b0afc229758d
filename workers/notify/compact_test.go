package notify

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The record is compacted past compactAt to its recent lines (of the last
// keepFor, the newest keepLines); a claim kept stays claimed for every process, and one process's compaction is
// seen by another (a new file, read from its start), never misread from an
// old offset.
func TestRecordCompacts(t *testing.T) {
	project := t.TempDir()
	oldAt, oldKeep := compactAt, keepLines
	compactAt, keepLines = 4<<10, 10
	t.Cleanup(func() { compactAt, keepLines = oldAt, oldKeep })
	a, b := newRecord(project), newRecord(project)
	claim := func(r *record, id string, at time.Time) {
		t.Helper()
		release, err := r.hold()
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		if err := r.add(Line{At: at, To: "hook", State: Claimed, Msg: id, IDs: []string{id}}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	claim(a, "ancient", now.Add(-keepFor-time.Hour))
	for i := range 40 {
		claim(a, "old-"+string(rune('a'+i%26))+string(rune('a'+i/26)), now.Add(-time.Hour))
	}
	size := func() int64 {
		fi, err := os.Stat(filepath.Join(project, RecordRel))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	claim(b, "recent", now) // b reads a's lines, past 4 KiB, and compacts
	claim(a, "after", now)  // a must see the new file from its start
	if size() >= before {
		t.Fatalf("the record was not compacted: %d bytes, %d before", size(), before)
	}
	claim(a, "more", now)
	for name, r := range map[string]*record{"a": a, "b": b} {
		release, err := r.hold()
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"recent", "after", "more", "old-nb"} {
			if !r.claimed["hook"][id] {
				t.Errorf("%s is not claimed for %s after the compaction", id, name)
			}
		}
		// Older than keepFor, and past the newest keepLines.
		for _, id := range []string{"ancient", "old-aa"} {
			if r.claimed["hook"][id] {
				t.Errorf("%s survived the compaction for %s", id, name)
			}
		}
		release()
	}
}

// A record whose recent lines alone pass compactAt (long texts) is
// compacted to half of it, not rewritten whole at every hold.
func TestCompactionBoundsBytes(t *testing.T) {
	project := t.TempDir()
	oldAt := compactAt
	compactAt = 4 << 10
	t.Cleanup(func() { compactAt = oldAt })
	r := newRecord(project)
	text := strings.Repeat("x", 400)
	for i := range 20 {
		release, err := r.hold()
		if err != nil {
			t.Fatal(err)
		}
		if err := r.add(Line{At: time.Now(), To: "hook", State: Claimed, Msg: strconv.Itoa(i), IDs: []string{strconv.Itoa(i)}, Text: text}); err != nil {
			t.Fatal(err)
		}
		release()
	}
	fi, err := os.Stat(filepath.Join(project, RecordRel))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > compactAt {
		t.Errorf("compacted to %d bytes, over compactAt %d", fi.Size(), compactAt)
	}
	release, err := r.hold()
	if err != nil {
		t.Fatal(err)
	}
	release()
	if again, _ := os.Stat(filepath.Join(project, RecordRel)); !os.SameFile(fi, again) {
		t.Errorf("compacted again with nothing added")
	}
	if !r.claimed["hook"]["19"] {
		t.Errorf("the newest claim was dropped")
	}
}
