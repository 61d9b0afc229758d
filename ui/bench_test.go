package ui

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/fleetwatch/fleetwatch/internal/testkit/plangen"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// benchModel is the UI at 160×48 in true colour with n plans, all in the
// selected lane (the worst case for one table), every twentieth leased.
func benchModel(b *testing.B, n int) Model {
	b.Helper()
	dir := b.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		b.Fatal(err)
	}
	tree, err := planfs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	clock := time.Unix(1_800_000_000, 0)
	tree.Now = func() time.Time { return clock }
	now := float64(clock.Unix())
	s := &model.Snapshot{}
	for i := range n {
		name := plangen.File(i)
		s.Plans = append(s.Plans, model.Plan{
			Rel: "features/" + name, Lane: model.Features, Name: name, Slug: model.SlugOf(name),
			ModTime: plangen.ModTime(i, clock).UnixNano(), Header: model.ParseHeader(plangen.Text(i, n)),
		})
		if i%20 == 0 {
			l := plangen.Lease(i, clock)
			l.Rel = "features/" + name
			s.Leases = append(s.Leases, l)
		}
	}
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	m := New(uictx.Options{Tree: tree, Agent: "op", NoWatch: true, Renderer: r})
	plansOf(&m).ShowLane(model.Features)
	m = step(m, tea.WindowSizeMsg{Width: 160, Height: 48})
	return step(m, loadedMsg{d: uictx.NewData(model.NewBoard(s, model.Options{Now: now}), now)})
}

func step(m Model, msg tea.Msg) Model {
	next, _ := m.Update(msg)
	return next.(Model)
}

// BenchmarkView10k is one frame with 10,000 plans in the lane.
func BenchmarkView10k(b *testing.B) {
	m := benchModel(b, 10_000)
	_ = m.View()
	b.ResetTimer()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkKeyDown10k is a key press and the frame after it, moving down
// through 10,000 plans (wrapping to the top at the end).
func BenchmarkKeyDown10k(b *testing.B) {
	m := benchModel(b, 10_000)
	down, top := tea.KeyMsg{Type: tea.KeyDown}, tea.KeyMsg{Type: tea.KeyHome}
	b.ResetTimer()
	for b.Loop() {
		msg := down
		if plansOf(&m).Cursor == plansOf(&m).Len()-1 {
			msg = top
		}
		m = step(m, msg)
		_ = m.View()
	}
}

// BenchmarkPageDown10k pages through 10,000 plans: every frame is rows
// never rendered before.
func BenchmarkPageDown10k(b *testing.B) {
	m := benchModel(b, 10_000)
	pg, top := tea.KeyMsg{Type: tea.KeyPgDown}, tea.KeyMsg{Type: tea.KeyHome}
	b.ResetTimer()
	for b.Loop() {
		msg := pg
		if plansOf(&m).Cursor == plansOf(&m).Len()-1 {
			msg = top
		}
		m = step(m, msg)
		_ = m.View()
	}
}

// BenchmarkRefresh10k is what a change on disk costs the UI goroutine once
// the scan is done: new rows for every pane and the first frame.
func BenchmarkRefresh10k(b *testing.B) {
	m := benchModel(b, 10_000)
	d := m.d
	b.ResetTimer()
	for b.Loop() {
		m = step(m, loadedMsg{d: d})
		_ = m.View()
	}
}

// BenchmarkChangeToData is the time from a plan file changing on disk to the
// UI holding the new board: the watcher's debounce, the rescan and the
// four-tier judgement, on a real tree with a real fsnotify watcher.
func BenchmarkChangeToData(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(kit.Itoa(n/1000)+"k", func(b *testing.B) {
			dir := b.TempDir()
			if err := plangen.Write(dir, n, time.Now()); err != nil {
				b.Fatal(err)
			}
			tree, err := planfs.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			w, err := tree.Watch(Debounce)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			load := loadCmd(tree)
			if msg := load().(loadedMsg); msg.err != nil { // warm the scan cache, as a running UI has
				b.Fatal(msg.err)
			}
			plan := filepath.Join(dir, planfs.Dir, string(plangen.Lane(0)), plangen.File(0))
			text := plangen.Text(0, n)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if err := os.WriteFile(plan, []byte(text+strings.Repeat("\n", i%2)), 0o644); err != nil {
					b.Fatal(err)
				}
				if c := <-w.Changes(); c.Err != nil {
					b.Fatal(c.Err)
				}
				if msg := load().(loadedMsg); msg.err != nil {
					b.Fatal(msg.err)
				}
			}
		})
	}
}

// BenchmarkLogFlood is a chatty agent's batch of 10,000 log lines reaching
// an open log pane, in colour, then the frame: both on the UI goroutine,
// so together they must stay well inside a 16 ms frame.
func BenchmarkLogFlood(b *testing.B) {
	h := logFloodHarness(b)
	batch := logFloodBatch()
	b.ResetTimer()
	for range b.N {
		h.update(logLinesMsg{gen: h.m.logsShown().gen, lines: batch})
		_ = h.m.View()
	}
}

// rssTreeEnv names the tree TestRSSChild opens; unset, it does nothing.
const rssTreeEnv = "FLEETWATCH_RSS_TREE"

// BenchmarkRSS10k is the peak resident memory of a process with the UI open
// on a 10,000-plan tree, with its real watcher, after the first load, a few
// changes reloaded, and frames drawn: a child process (this test binary
// running TestRSSChild), so that generating the tree does not count.
func BenchmarkRSS10k(b *testing.B) {
	dir := b.TempDir()
	if err := plangen.Write(dir, 10_000, time.Now()); err != nil {
		b.Fatal(err)
	}
	peak := 0.0
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestRSSChild$", "-test.v")
		cmd.Env = append(os.Environ(), rssTreeEnv+"="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		_, after, ok := strings.Cut(string(out), "VmHWM:")
		var kb float64
		if _, err := fmt.Sscan(after, &kb); !ok || err != nil {
			b.Fatalf("no VmHWM in the child's output:\n%s", out)
		}
		peak = max(peak, kb/1024)
	}
	b.ReportMetric(peak, "MB-peak-RSS")
}

// TestRSSChild is BenchmarkRSS10k's child: it opens the UI on the tree
// rssTreeEnv names, as `fleetwatch` does, and prints its peak RSS.
func TestRSSChild(t *testing.T) {
	dir := os.Getenv(rssTreeEnv)
	if dir == "" {
		t.Skip("run by BenchmarkRSS10k")
	}
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	m := New(uictx.Options{Tree: tree, Agent: "op", Renderer: r})
	defer m.Close()
	m = step(m, tea.WindowSizeMsg{Width: 160, Height: 48})
	m = step(m, loadCmd(tree)())
	_ = m.View()
	plan := filepath.Join(dir, planfs.Dir, string(plangen.Lane(0)), plangen.File(0))
	for i := range 5 {
		if err := os.WriteFile(plan, []byte(plangen.Text(0, 10_000)+strings.Repeat("\n", i%2)), 0o644); err != nil {
			t.Fatal(err)
		}
		<-watcherOf(&m).Changes()
		m = step(m, loadCmd(tree)())
		m = step(m, tea.KeyMsg{Type: tea.KeyPgDown})
		_ = m.View()
	}
	// RSS_HEAP=file also writes a heap profile: what the memory is.
	if p := os.Getenv("RSS_HEAP"); p != "" {
		f, _ := os.Create(p)
		runtime.GC()
		pprof.WriteHeapProfile(f)
		f.Close()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("heapinuse %d MB sys %d MB totalalloc %d MB\n", ms.HeapInuse>>20, ms.Sys>>20, ms.TotalAlloc>>20)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			fmt.Println(line)
		}
	}
}
