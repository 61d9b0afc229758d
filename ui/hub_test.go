package ui

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/ui/feed"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// session is one real program fed by a hub, as serve runs one per SSH
// session; seen is the board its model shows after each message.
type session struct {
	prog *tea.Program
	seen *atomic.Pointer[uictx.Data]
	done chan Model
}

// probe is the session's model, telling the test what it shows. It holds
// the model by pointer, so the program copies no more than it would copy
// a Model.
type probe struct {
	m    *Model
	seen *atomic.Pointer[uictx.Data]
}

func (p probe) Init() tea.Cmd { return p.m.Init() }
func (p probe) View() string  { return p.m.View() }
func (p probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	next, cmd := p.m.Update(msg)
	*p.m = next.(Model)
	p.seen.Store(p.m.d)
	return p, cmd
}

// openSession runs a program on hub at 80×24, drawing to nowhere.
func openSession(tb testing.TB, p *project, hub *Hub) *session {
	tb.Helper()
	opt := p.options()
	opt.NoWatch, opt.Hub = false, hub
	s := &session{seen: &atomic.Pointer[uictx.Data]{}, done: make(chan Model, 1)}
	m := New(opt)
	s.prog = tea.NewProgram(probe{m: &m, seen: s.seen},
		tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignalHandler(), tea.WithFPS(frameRate))
	go func() {
		final, _ := s.prog.Run()
		m := final.(probe).m
		m.Close()
		s.done <- *m
	}()
	s.prog.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
	tb.Cleanup(func() { s.close(tb) })
	return s
}

// close quits the program and waits for it, once.
func (s *session) close(tb testing.TB) Model {
	tb.Helper()
	if s.prog == nil {
		return Model{}
	}
	s.prog.Quit()
	select {
	case m := <-s.done:
		s.prog = nil
		return m
	case <-time.After(10 * time.Second):
		tb.Fatal("a session did not quit in 10 s")
	}
	return Model{}
}

// has reports whether the session shows rel.
func (s *session) has(rel string) bool {
	d := s.seen.Load()
	return d != nil && d.Rels[rel]
}

// waitAll waits until every session shows rel, at most limit.
func waitAll(tb testing.TB, ss []*session, rel string, limit time.Duration) time.Duration {
	tb.Helper()
	start := time.Now()
	for {
		all := true
		for _, s := range ss {
			all = all && s.has(rel)
		}
		if all {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			tb.Fatalf("after %v, not every session shows %s", limit, rel)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func writePlan(tb testing.TB, p *project, rel string) {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(p.tree.Plans, rel), []byte(plan("New "+rel, "high", "P1", "small", "", "none")), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func newHub(tb testing.TB, p *project) *Hub {
	tb.Helper()
	h, err := NewHub(p.tree)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close() })
	return h
}

// A plan written to disk reaches every session of one hub, two or twenty,
// and the hub reads it once: twenty sessions run git as often as one.
func TestHubFeedsEverySession(t *testing.T) {
	gitFor := map[int]int{}
	for _, n := range []int{1, 2, 20} {
		p := newProject(t)
		hub := newHub(t, p)
		ss := make([]*session, n)
		for i := range ss {
			ss[i] = openSession(t, p, hub)
		}
		waitAll(t, ss, "bugs/crash-on-save.md", 15*time.Second)
		time.Sleep(4 * Debounce) // the first readings are all out
		rel := "bugs/hub-" + strconv.Itoa(n) + ".md"
		gitFor[n] = testkit.GitRuns(t, func() {
			writePlan(t, p, rel)
			took := waitAll(t, ss, rel, 10*time.Second)
			t.Logf("%d sessions: the change reached all in %v", n, took)
			time.Sleep(4 * Debounce) // what else the change leads to
		})
		for _, s := range ss {
			s.close(t)
		}
	}
	if gitFor[20] > gitFor[1] {
		t.Errorf("one change ran git %d times for 20 sessions, %d for one: each reading should run once", gitFor[20], gitFor[1])
	}
}

// A session that never takes from its mailbox holds up no one: the others
// get each change, and it later gets only the newest reading of each kind.
func TestHubStuckSessionDelaysNoOne(t *testing.T) {
	p := newProject(t)
	hub := newHub(t, p)
	opt := p.options()
	opt.NoWatch, opt.Hub = false, hub
	stuck := New(opt) // subscribed, never run
	defer stuck.Close()
	ss := []*session{openSession(t, p, hub), openSession(t, p, hub)}
	waitAll(t, ss, "bugs/crash-on-save.md", 15*time.Second)
	for i := range 3 {
		rel := "bugs/burst-" + strconv.Itoa(i) + ".md"
		writePlan(t, p, rel)
		waitAll(t, ss, rel, 10*time.Second)
	}
	msg := waitHubCmd(subOf(&stuck))()
	got, ok := msg.(hubMsg)
	if !ok {
		t.Fatalf("the stuck session's mailbox brought %T", msg)
	}
	boards := 0
	for _, m := range got {
		if l, ok := m.(loadedMsg); ok {
			boards++
			if l.d == nil || !l.d.Rels["bugs/burst-2.md"] {
				t.Errorf("the stuck session's board is not the newest: %v", l.err)
			}
		}
	}
	if boards != 1 {
		t.Errorf("the stuck session got %d boards, want the newest one alone", boards)
	}
}

// Close ends every mailbox: a session's wait returns, bringing nothing,
// and a model subscribing after is ended at once.
func TestHubCloseEndsMailboxes(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	hub, err := NewHub(p.tree)
	if err != nil {
		t.Fatal(err)
	}
	opt := p.options()
	opt.Hub = hub
	m := New(opt)
	defer m.Close()
	waitHubCmd(subOf(&m))() // the first readings
	hub.Close()
	got := make(chan tea.Msg, 1)
	go func() { got <- waitHubCmd(subOf(&m))() }()
	select {
	case msg := <-got:
		if msg != nil {
			t.Errorf("after Close the mailbox brought %T", msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("after Close the mailbox's wait did not end")
	}
	late := New(opt)
	if !subOf(&late).Ended() {
		t.Error("a session subscribing after Close has a live mailbox")
	}
	if err := hub.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// A model fed by a hub reads nothing itself: after an action it pokes
// the hub, and the hub's reading brings the board again, with no change on
// disk for a watcher to see.
func TestHubModelPokesAfterAction(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	hub := newHub(t, p)
	opt := p.options()
	opt.NoWatch, opt.Hub = false, hub
	m := New(opt)
	defer m.Close()
	if watcherOf(&m) != nil || statesOf(&m) != nil {
		t.Error("a model fed by a hub runs watchers of its own")
	}
	first := waitHubCmd(subOf(&m))()
	for _, msg := range first.(hubMsg) {
		m.updateData(msg)
	}
	time.Sleep(4 * Debounce)
	waitHubCmdNow(subOf(&m)) // anything the first readings left
	next, _ := m.Update(uictx.ActionMsg{Done: "promoted x"})
	m = next.(Model)
	if m.feed.req(feed.Board).busy || m.feed.req(feed.Trees).busy || m.feed.req(feed.Workers).busy || m.feed.req(feed.Merge).busy {
		t.Error("after an action the model reads itself")
	}
	got := make(chan tea.Msg, 1)
	go func() { got <- waitHubCmd(subOf(&m))() }()
	select {
	case msg := <-got:
		boards := 0
		for _, x := range msg.(hubMsg) {
			if _, ok := x.(loadedMsg); ok {
				boards++
			}
		}
		if boards != 1 {
			t.Errorf("the poke brought %d boards, want 1: %#v", boards, msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the hub did not read again after the model's poke")
	}
}

// waitHubCmdNow empties the mailbox without waiting.
func waitHubCmdNow(mb *mailbox) { mb.Take() }
