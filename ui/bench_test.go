package ui

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"fleetwatch/internal/plangen"
	"fleetwatch/model"
	"fleetwatch/planfs"
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
	m := New(Options{Tree: tree, Agent: "op", NoWatch: true, Renderer: r})
	m.plans.lane = model.Features
	m = step(m, tea.WindowSizeMsg{Width: 160, Height: 48})
	return step(m, loadedMsg{d: newData(model.NewBoard(s, model.Options{Now: now}), now)})
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
		if m.plans.cursor == m.plans.len()-1 {
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
		if m.plans.cursor == m.plans.len()-1 {
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
		b.Run(itoa(n/1000)+"k", func(b *testing.B) {
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
