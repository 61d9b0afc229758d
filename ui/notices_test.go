package ui

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// bells is a program output that counts the BELs written to it.
type bells struct {
	mu sync.Mutex
	n  int
}

func (b *bells) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += strings.Count(string(p), "\a")
	return len(p), nil
}

func (b *bells) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// exitState writes a state file of a worker of agent that exited with code,
// started at the tree's clock.
func (p *project) exitState(t testing.TB, agent string, code int) {
	t.Helper()
	at := look.Stamp{Time: p.tree.Now()}
	st := look.State{PID: 99999, AgentID: agent, Tier: "small", Plan: "bugs/crash-on-save.md", Host: "build-7",
		Started: at, LastHeartbeat: at, State: look.StateExited, ExitCode: &code}
	if err := look.WriteState(p.dir, st); err != nil {
		t.Fatal(err)
	}
}

func noticeHarness(t *testing.T, w, hgt int, noBell bool) (*project, *harness, *bells) {
	t.Helper()
	p := newProject(t)
	// Already true when the UI opens, so not news: csv-import waits in
	// review, old-import's lease ran out, small-3 exited 2.
	p.addWorkers(t)
	out := &bells{}
	opt := p.options()
	opt.Out, opt.NoBell = out, noBell
	h := newHarnessWith(t, p, opt, w, hgt)
	return p, h, out
}

func headerOf(h *harness) string { return strings.SplitN(h.view(), "\n", 2)[0] }

func TestNoticesHeaderListAndEnter(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			t.Parallel()
			p, h, out := noticeHarness(t, sz[0], sz[1], false)
			if hd := headerOf(h); strings.Contains(hd, "⚑") || out.count() != 0 {
				t.Fatalf("facts true at the start were noticed (%d bells): %q", out.count(), hd)
			}
			if _, err := p.tree.Complete("in-progress/export-pdf.md", model.ReviewNeeded, planfs.Actor{AgentID: "mid-1"}); err != nil {
				t.Fatal(err)
			}
			h.send(changeMsg{})
			if hd := headerOf(h); !strings.Contains(hd, "⚑ 1") || out.count() != 1 {
				t.Fatalf("export-pdf reached review: %d bells, header %q", out.count(), hd)
			}
			h.send(changeMsg{}) // the same facts again
			p.exitState(t, "small-7", 3)
			h.send(stateChangeMsg{})
			if hd := headerOf(h); !strings.Contains(hd, "⚑ 2") || out.count() != 1 {
				t.Fatalf("small-7 failed within 10 s of the last bell: %d bells (want 1), header %q", out.count(), hd)
			}

			h.press("N")
			v := h.view()
			failed, review := strings.Index(v, "failed   small-7 exited 3 on bugs/crash-on-save.md"),
				strings.Index(v, "review   export-pdf waits for review: Export a note as PDF")
			if !strings.Contains(v, "Notices · 2") || failed < 0 || review < failed || !strings.Contains(v, "09:30:00") {
				t.Fatalf("the notices, newest first, with their times:\n%s", v)
			}
			if strings.Contains(headerOf(h), "⚑") {
				t.Errorf("the list is read, yet the header counts: %q", headerOf(h))
			}
			if f := h.footer(); !strings.Contains(f, "enter go to it") || strings.Contains(f, "park") {
				t.Errorf("the footer lists keys that do not work in the list: %q", f)
			}
			// A review notice leads to the candidate in the Merge pane,
			// selected once the queue is read.
			h.press("j", "enter")
			if h.m.stack.top() != nil || h.m.pane != mergePane || h.m.merge.want != "export-pdf" {
				t.Fatalf("enter on the review notice: pane %d, want %q:\n%s", h.m.pane, h.m.merge.want, h.view())
			}
			h.send(mergeMsg{listing: sampleListing(h.p)})
			if r := mergeOf(&h.m).Row(); r == nil || r.Slug != "export-pdf" || h.m.merge.want != "" {
				t.Fatalf("the review notice's candidate is not selected once read: %v\n%s", r, h.view())
			}
			h.press("N", "enter")
			if w := h.m.selectedWorker(); h.m.pane != workersPane || w == nil || w.St.AgentID != "small-7" {
				t.Fatalf("enter on the failed notice did not select small-7 in Workers:\n%s", h.view())
			}
			h.press("N", "esc")
			if h.m.stack.top() != nil || strings.Contains(headerOf(h), "⚑") {
				t.Errorf("esc left the list open or the count back:\n%s", h.view())
			}
		})
	}
}

func TestNoticesEmptyList(t *testing.T) {
	t.Parallel()
	_, h, _ := noticeHarness(t, 80, 24, false)
	h.press("N")
	if v := h.view(); !strings.Contains(v, "Notices · 0") || !strings.Contains(v, "no notices") {
		t.Fatalf("an empty list says what would show:\n%s", v)
	}
	h.press("enter")
	if h.m.stack.top() != nil || h.m.pane != plansPane {
		t.Errorf("enter on an empty list: the list closes, nothing else moves")
	}
}

// TestNoticesLeaseAndStaleWorker: the clock alone makes notices: a lease
// runs out with no worker driving it, a live worker stops heartbeating.
func TestNoticesLeaseAndStaleWorker(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	host, _ := os.Hostname()
	live := look.State{PID: os.Getpid(), AgentID: "busy-1", Tier: "mid", Host: host, State: look.StateRunning,
		Started: look.Stamp{Time: testNow}, LastHeartbeat: look.Stamp{Time: testNow}, HeartbeatEvery: 30}
	if err := look.WriteState(p.dir, live); err != nil {
		t.Fatal(err)
	}
	out := &bells{}
	opt := p.options()
	opt.Out = out
	h := newHarnessWith(t, p, opt, 160, 48)
	if strings.Contains(headerOf(h), "⚑") {
		t.Fatalf("noticed at the start: %q", headerOf(h))
	}
	p.at(-51 * time.Minute) // export-pdf's lease (mid-1's, no state file) ran out; busy-1 went silent
	h.send(tickMsg(testNow))
	h.press("N")
	v := h.view()
	for _, want := range []string{"expired  in-progress/export-pdf.md: mid-1's lease expired and no worker drives it",
		"stale    busy-1 stopped heartbeating"} {
		if !strings.Contains(v, want) {
			t.Errorf("the list lacks %q:\n%s", want, v)
		}
	}
	if out.count() != 1 {
		t.Errorf("two notices in one look rang %d bells, want 1", out.count())
	}
	h.press("g")
	for i := 0; h.m.notes.list[i].Kind != model.NoticeLeaseExpired; i++ {
		h.press("j")
	}
	h.press("enter")
	if l := h.m.selection().Lease; h.m.pane != leasesPane || l == nil || l.File != "in-progress__export-pdf.md.json" {
		t.Fatalf("enter on the lease notice did not select its lease:\n%s", h.view())
	}
}

// TestBellAtMostEveryTenSeconds: by the tree's clock, a bell 5 s after the
// last is dropped, one 11 s after rings; --no-bell never rings and the
// header still counts.
func TestBellAtMostEveryTenSeconds(t *testing.T) {
	t.Parallel()
	for _, noBell := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-bell=%v", noBell), func(t *testing.T) {
			t.Parallel()
			p, h, out := noticeHarness(t, 80, 24, noBell)
			want := []int{1, 1, 2, 2, 3}
			if noBell {
				want = []int{0, 0, 0, 0, 0}
			}
			for i, after := range []time.Duration{0, 5 * time.Second, 11 * time.Second, 20 * time.Second, 21 * time.Second} {
				p.at(-after)
				p.exitState(t, fmt.Sprintf("fail-%d", i), 1)
				h.send(stateChangeMsg{})
				if out.count() != want[i] {
					t.Fatalf("notice %d at +%v: %d bells, want %d", i+1, after, out.count(), want[i])
				}
				if hd := headerOf(h); !strings.Contains(hd, "⚑ "+kit.Itoa(i+1)) {
					t.Fatalf("notice %d: header %q", i+1, hd)
				}
			}
		})
	}
}

// TestNoticesScroll: a list longer than the screen scrolls with the
// cursor, and moving back up does not jump the window.
func TestNoticesScroll(t *testing.T) {
	t.Parallel()
	p, h, _ := noticeHarness(t, 80, 24, false)
	for i := range 40 {
		p.exitState(t, fmt.Sprintf("fail-%02d", i), 1)
	}
	h.send(stateChangeMsg{})
	h.press("N")
	first, last := "fail-00 exited 1", "fail-39 exited 1"
	if v := h.view(); !strings.Contains(v, "Notices · 40") || !strings.Contains(v, first) || strings.Contains(v, last) {
		t.Fatalf("the top of the list:\n%s", v)
	}
	h.press("G")
	v := h.view()
	if !strings.Contains(v, "▸ 09:30:00  failed   "+last) || strings.Contains(v, first) {
		t.Fatalf("G: the bottom of the list:\n%s", v)
	}
	h.press("k", "k")
	if v2 := h.view(); !strings.Contains(v2, last) || !strings.Contains(v2, "▸ 09:30:00  failed   fail-37") {
		t.Fatalf("k from the bottom moved the window:\n%s", v2)
	}
	h.press("pgup", "g")
	if v := h.view(); !strings.Contains(v, "▸ 09:30:00  failed   "+first) {
		t.Fatalf("g: the top again:\n%s", v)
	}
}

// The cockpit hands the notifier every notice true at each look, the ones
// true when it opened too (the record, not the cockpit, says what was
// sent), a run paused at its budget among them.
func TestNoticesOfferedToTheNotifier(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	var mu sync.Mutex
	var offered [][]model.Notice
	opt := p.options()
	opt.Out, opt.NoBell = &bells{}, true
	opt.Notify = func(ns []model.Notice) { mu.Lock(); offered = append(offered, ns); mu.Unlock() }
	h := newHarnessWith(t, p, opt, 80, 24)
	last := func() map[model.NoticeKind]int {
		mu.Lock()
		defer mu.Unlock()
		kinds := map[model.NoticeKind]int{}
		if len(offered) > 0 {
			for _, n := range offered[len(offered)-1] {
				kinds[n.Kind]++
			}
		}
		return kinds
	}
	if k := last(); k[model.NoticeReview] != 1 || k[model.NoticeWorkerFailed] != 1 {
		t.Fatalf("the first look offered %v", k)
	}
	at := look.Stamp{Time: p.tree.Now()}
	st := look.State{PID: os.Getpid(), AgentID: "mid-9", Tier: "mid", Plan: "in-progress/export-pdf.md", Host: "elsewhere", HeartbeatEvery: 60,
		Started: at, LastHeartbeat: at, State: look.StateRunning, Paused: "budget reached: the run's budget ($5)", PausedAt: at}
	if err := look.WriteState(p.dir, st); err != nil {
		t.Fatal(err)
	}
	h.send(stateChangeMsg{})
	if k := last(); k[model.NoticeBudget] != 1 || k[model.NoticeReview] != 1 {
		t.Fatalf("after mid-9 paused at its budget, offered %v", k)
	}
}
