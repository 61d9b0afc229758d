package planfs

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// fullScanOf is what a Tree that never scanned before reads: no cache, no
// base, every file read.
func fullScanOf(t *testing.T, tr *Tree) *model.Snapshot {
	t.Helper()
	fresh, err := Open(tr.Project)
	if err != nil {
		t.Fatal(err)
	}
	return scan(t, fresh)
}

// sameSnapshot fails with the first difference between an incremental and
// a full scan.
func sameSnapshot(t *testing.T, what string, got, want *model.Snapshot) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	switch {
	case !reflect.DeepEqual(rels(got), rels(want)):
		t.Fatalf("%s: plans\n got %v\nwant %v", what, rels(got), rels(want))
	case !reflect.DeepEqual(got.Warnings, want.Warnings):
		t.Fatalf("%s: warnings\n got %v\nwant %v", what, got.Warnings, want.Warnings)
	case !reflect.DeepEqual(got.Leases, want.Leases):
		t.Fatalf("%s: leases\n got %+v\nwant %+v", what, got.Leases, want.Leases)
	}
	for i := range got.Plans {
		if !reflect.DeepEqual(got.Plans[i], want.Plans[i]) {
			t.Fatalf("%s: plan %s\n got %+v\nwant %+v", what, got.Plans[i].Rel, got.Plans[i], want.Plans[i])
		}
	}
	t.Fatalf("%s: snapshots differ", what)
}

// randomChange makes one change a worker, an editor or a person might, and
// returns the paths it touched.
func randomChange(t *testing.T, tr *Tree, rng *rand.Rand) []string {
	t.Helper()
	lanes := []string{"features", "bugs", "in-progress", "drafts", "completed"}
	lane := func() string { return lanes[rng.IntN(len(lanes))] }
	plan := func(l string) string { return tr.Abs(fmt.Sprintf("%s/p%d.md", l, rng.IntN(12))) }
	lease := func() string {
		return filepath.Join(tr.Plans, ".leases", model.LeaseFileName(fmt.Sprintf("in-progress/p%d.md", rng.IntN(12))))
	}
	// A change that cannot be made here (a write onto a folder, a rename
	// of nothing) is made by nobody; its paths are still reported, as a
	// watcher may report a path whose change was undone.
	must := func(err error) {}
	switch rng.IntN(10) {
	case 0, 1, 2: // write a plan, sometimes with a broken header
		p := plan(lane())
		body := fmt.Sprintf("# %d\n\n- **Priority:** P%d\n- **Depends on:** p%d\n", rng.IntN(100), 1+rng.IntN(3), rng.IntN(12))
		if rng.IntN(4) == 0 {
			body = "# bad\n- **Priority:** urgent\n\xff\n"
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			os.Remove(p) // a write through it changes its target, a path not reported here
		}
		must(os.WriteFile(p, []byte(body), 0o644))
		return []string{p}
	case 3: // remove one
		p := plan(lane())
		must(os.Remove(p))
		return []string{p}
	case 4: // move between lanes, as a claim does
		from, to := plan(lane()), plan(lane())
		must(os.Rename(from, to))
		return []string{from, to}
	case 5: // a symlink to another plan, or a broken one
		p := plan(lane())
		os.Remove(p)
		must(os.Symlink(filepath.Base(plan("x")), p))
		return []string{p}
	case 6: // a folder named like a plan
		p := plan(lane())
		os.Remove(p)
		must(os.Mkdir(p, 0o755))
		return []string{p}
	case 7: // a lease, good or garbage
		p := lease()
		data := []byte(`{"plan":"x.md","agent_id":"mid-1","claimed_at":1,"expires_at":2}`)
		if rng.IntN(3) == 0 {
			data = []byte("{not json")
		}
		must(os.WriteFile(p, data, 0o644))
		return []string{p}
	case 8: // a lease removed, or a file there that names no plan
		if rng.IntN(2) == 0 {
			p := lease()
			must(os.Remove(p))
			return []string{p}
		}
		p := filepath.Join(tr.Plans, ".leases", fmt.Sprintf("junk%d.json", rng.IntN(3)))
		must(os.WriteFile(p, []byte("{}"), 0o644))
		return []string{p}
	}
	// a folder removed again, or a file no scan reads
	p := plan(lane())
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		must(os.Remove(p))
		return []string{p}
	}
	p = filepath.Join(filepath.Dir(p), "notes.txt")
	must(os.WriteFile(p, []byte("x"), 0o644))
	return []string{p}
}

// After any sequence of changes, a Rescan told the changed paths returns
// exactly what a full scan of a fresh Tree does.
func TestRescanEqualsFullScan(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			tr := mkTree(t, "features/p1.md: - **Priority:** P1", "bugs/p2.md:", "in-progress/p3.md:")
			tr.setWatched(1) // as a running watcher does
			scan(t, tr)
			for step := range 60 {
				var touched []string
				for range 1 + rng.IntN(4) {
					touched = append(touched, randomChange(t, tr, rng)...)
				}
				for _, p := range touched {
					tr.noteChanged(p)
				}
				got, err := tr.Rescan()
				if err != nil {
					t.Fatal(err)
				}
				sameSnapshot(t, fmt.Sprintf("step %d (%s)", step, strings.Join(touched, " ")), got, fullScanOf(t, tr))
			}
		})
	}
}

// The same through a real watcher: what it reports is enough.
func TestRescanWithWatcherEqualsFullScan(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(42, 1))
	tr := mkTree(t, "features/p1.md:", "bugs/p2.md:")
	w := startWatch(t, tr)
	scan(t, tr)
	settle(t, w)
	for step := range 20 {
		randomChange(t, tr, rng)
		// A change not made, or one no scan reads, gives no Change; either
		// way the Rescan must match, once the watcher has seen it.
		watcherCaughtUp(t, tr, w)
		got, err := tr.Rescan()
		if err != nil {
			t.Fatal(err)
		}
		sameSnapshot(t, fmt.Sprintf("step %d", step), got, fullScanOf(t, tr))
	}
}

// watcherCaughtUp returns once w has noted every change made to tr so
// far. It moves a file onto the event log, one event that no scan reads,
// and waits for the Change carrying it: inotify queues a watcher's events
// in the order they happened, so every earlier one was noted before it.
// (Waiting a second for a Change that may never come took 11 s a run.)
func watcherCaughtUp(t *testing.T, tr *Tree, w *Watcher) {
	t.Helper()
	log := filepath.Join(tr.Plans, filepath.FromSlash(EventsFile))
	tmp := filepath.Join(filepath.Dir(log), ".caught-up")
	if err := os.WriteFile(tmp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, log); err != nil {
		t.Fatal(err)
	}
	for {
		c, ok := nextChange(t, w, 5*time.Second)
		switch {
		case !ok:
			t.Fatal("the event log's move reached no Change within 5s")
		case c.Full:
			// Its paths are not told: wait out the burst instead.
			settle(t, w)
			return
		case slices.Contains(c.Paths, log):
			return
		}
	}
}

// Without a watcher Rescan cannot know what changed: it reads everything.
func TestRescanUnwatchedIsFull(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	scan(t, tr)
	if err := os.WriteFile(tr.Abs("features/b.md"), []byte("# b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := tr.Rescan()
	if err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "unwatched", got, fullScanOf(t, tr))
}

// Too many paths, or lost events, fall back to a full scan: a change never
// noted is still seen.
func TestRescanFallsBackToFull(t *testing.T) {
	for _, tc := range []struct {
		name string
		mark func(tr *Tree)
	}{
		{"burst", func(tr *Tree) {
			for i := range RescanLimit + 1 {
				tr.noteChanged(tr.Abs(fmt.Sprintf("drafts/n%d.md", i)))
			}
		}},
		{"overflow", func(tr *Tree) { tr.noteChanged("") }},
		{"a path outside the lanes", func(tr *Tree) { tr.noteChanged(tr.Abs("stray/x.md")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := mkTree(t, "features/a.md:")
			tr.setWatched(1)
			scan(t, tr)
			// Not noted: only a full scan finds it.
			if err := os.WriteFile(tr.Abs("bugs/unnoted.md"), []byte("# u\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tc.mark(tr)
			got, err := tr.Rescan()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(rels(got), " "), "bugs/unnoted.md") {
				t.Fatalf("no full scan after a %s: %v", tc.name, rels(got))
			}
		})
	}
}

// A noted change is read even when its size and mtime are the old ones,
// and nothing unnoted is looked at.
func TestRescanReadsOnlyWhatIsNoted(t *testing.T) {
	tr := mkTree(t, "features/a.md: - **Priority:** P1", "features/b.md: - **Priority:** P1")
	tr.setWatched(1)
	scan(t, tr)
	fi, _ := os.Stat(tr.Abs("features/a.md"))
	for _, name := range []string{"a", "b"} {
		p := tr.Abs("features/" + name + ".md")
		if err := os.WriteFile(p, []byte(strings.Replace(readFile(t, p), "P1", "P3", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, fi.ModTime(), fi.ModTime())
	}
	tr.noteChanged(tr.Abs("features/a.md"))
	got, err := tr.Rescan()
	if err != nil {
		t.Fatal(err)
	}
	prio := map[string]string{}
	for _, p := range got.Plans {
		prio[p.Name] = p.Header.Priority
	}
	if prio["a.md"] != "P3" || prio["b.md"] != "P1" {
		t.Fatalf("priorities %v: want a re-read (P3) and b untouched (P1)", prio)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
