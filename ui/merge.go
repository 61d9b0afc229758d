package ui

// The Merge pane's reading, held by the root (the pane is ui/panes/merge,
// given the reading as uictx.Ctx.Merge; the Plans pane reads it too): its
// slow tick while the queue is shown or checking, the lead from a notice
// to a candidate, and a landing's end. Its loading is readings.go's.

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/feed"
	"github.com/fleetwatch/fleetwatch/ui/forgesync"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/mergekeys"
	"github.com/fleetwatch/fleetwatch/ui/panes/merge"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// mergeReading is the last listing of the candidates and the queue, and
// its slow tick (ticking: a mergeTickMsg is pending; the feed asks for
// each reading, one at a time); want is a candidate to select once the
// listing shows it (a notice's).
type mergeReading struct {
	listing landing.Listing
	err     error
	loaded  bool
	ticking bool
	want    string
	pane    uictx.Pane // the Merge pane, which Rebuild rebuilds
	// forge reads the project's forge in the background (ui/forgesync).
	forge forgesync.Sync
}

// view is the reading as the panes are given it.
func (l *mergeReading) view() *uictx.Merge {
	return &uictx.Merge{Listing: l.listing, Err: l.err, Loaded: l.loaded, Want: l.want, Forge: l.forge.View()}
}

// browse is o in the Merge pane: the PR opened in the operator's browser,
// or, served, its address said (forgesync.Browse).
func (l *mergeReading) browse(m *Model, url string) tea.Cmd {
	cmd, say, bad := forgesync.Browse(url, m.feed.served())
	if say != "" {
		m.setStatus(say, bad)
	}
	return cmd
}

// syncForge is r in the Merge pane: the forge read now, in the background.
func (l *mergeReading) syncForge(m *Model) tea.Cmd {
	cmd := l.forge.Start(m.Opt.Tree)
	if cmd == nil {
		m.setStatus("reading the forge already; once more after it", false)
		return nil
	}
	m.setStatus("reading the forge…", false)
	return cmd
}

// forgeOn takes whether the project has a forge: o and r follow, and its
// first reading starts.
func (l *mergeReading) forgeOn(m *Model, on forgesync.OnMsg) tea.Cmd {
	cmd := l.forge.On(m.Opt.Tree, on)
	if on {
		l.Rebuild(m.ctx())
		m.syncKeys()
	}
	return cmd
}

// forgeDone takes a reading of the forge's end: what it did in the status
// line, its trouble above the queue, then the queue and the inbox read
// again (the PRs' records changed).
func (l *mergeReading) forgeDone(m *Model, msg forgesync.DoneMsg) tea.Cmd {
	was := l.forge.View().On
	cmd := l.forge.Done(m.Opt.Tree, msg)
	if !msg.On && !was {
		return cmd // no forge: nothing changed
	}
	if s := forgesync.Said(msg); s != "" {
		m.setStatus(s, false)
	}
	l.Rebuild(m.ctx())
	m.syncKeys()
	return tea.Batch(cmd, m.request(m.shownKinds()&feed.Merge.Set()|feed.Inbox.Set()))
}

// Rebuild rebuilds the Merge pane from the reading.
func (l *mergeReading) Rebuild(c *uictx.Ctx) { l.pane.Rebuild(c) }

// mergeOf is m's Merge pane.
func mergeOf(m *Model) *merge.Pane { return m.paneOf(mergePane).(*merge.Pane) }

// mergeTickMsg reads the queue again while it is looked at or checking:
// checks finish without any file the watcher sees changing in .plans/.
type mergeTickMsg time.Time

// mergeEvery is how often the shown or checking queue is read again.
const mergeEvery = 3 * time.Second

// mergeCmd lists every candidate and queue entry of project.
func mergeCmd(project string) tea.Cmd {
	return func() tea.Msg { return readMerge(project) }
}

func mergeTickCmd() tea.Cmd {
	return tea.Tick(mergeEvery, func(t time.Time) tea.Msg { return mergeTickMsg(t) })
}

func byPosition(a, b landing.Status) int { return position(a) - position(b) }

// position orders queue entries by place, the others after them.
func position(s landing.Status) int {
	if s.Position == nil {
		return 1 << 30
	}
	return *s.Position
}

// mergeTick starts the slow tick when the queue needs watching and none is
// pending.
func (m *Model) mergeTick() tea.Cmd {
	// With a hub, the hub ticks, once for every session.
	if m.feed.served() || m.merge.ticking || !m.mergeWatched() {
		return nil
	}
	m.merge.ticking = true
	return mergeTickCmd()
}

// mergeShown reports whether candidates are on screen: the Merge pane,
// or review-needed/ in the Plans pane, where the merge keys act on the
// selected plan's candidate.
func (m *Model) mergeShown() bool {
	return m.pane == mergePane || m.pane == plansPane && plansOf(m).Lane() == model.ReviewNeeded
}

// mergeWatched reports whether the queue may change with nothing on disk
// saying so to the watcher: it is shown, or a check is running.
func (m *Model) mergeWatched() bool {
	if m.mergeShown() {
		return true
	}
	for i := range m.merge.listing.Items {
		if m.merge.listing.Items[i].State == landing.Checking {
			return true
		}
	}
	return false
}

func (m *Model) mergeTicked() tea.Cmd {
	m.merge.ticking = false
	if !m.mergeWatched() {
		return nil
	}
	return tea.Batch(m.requestMerge(), m.mergeTick())
}

// leadToCandidate is enter on a "waits for review" notice: the Merge pane
// on that plan's candidate, once the queue is read.
func (m *Model) leadToCandidate(rel string) tea.Cmd {
	cmd := m.setPane(mergePane)
	slug := model.Rel(rel).Slug()
	m.merge.want = slug
	if m.merge.loaded && m.paneOf(mergePane).List().GoTo(slug) {
		m.merge.want = ""
	}
	m.syncKeys()
	return cmd
}

// updateAsked takes what answers bring besides an action's result: a
// question asked after another, a landing's end, an edit's steps.
func (m *Model) updateAsked(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case uictx.QuestionReq:
		m.stack.push(&dialog{Question: msg.Q})
		return nil, true
	case uictx.LandDoneMsg:
		return m.landDone(msg), true
	}
	return m.updateEdit(msg)
}

// landDone puts a landing's end on the status line; a refusal or failure
// is also a notice, naming the lander's reason.
func (m *Model) landDone(msg uictx.LandDoneMsg) tea.Cmd {
	last := ""
	if lines, _ := look.LogTail(msg.Log, 1); len(lines) > 0 {
		last = strings.TrimPrefix(strings.TrimSpace(lines[0]), "fleetwatch: ")
	}
	reload := tea.Batch(m.requestLoad(), m.mergeIfShown())
	if msg.Err == nil {
		m.setStatus("✓ "+mergekeys.OrWords(last, "landed "+msg.Slug+" @ "+kit.Short(msg.Commit)), false)
		return reload
	}
	why := "landing " + msg.Slug + " @ " + kit.Short(msg.Commit) + " did not land: " + mergekeys.OrWords(last, msg.Err.Error())
	m.setStatus("✗ "+why, true)
	// The notice (and its bell) comes from the lander's event in the log,
	// as it does for a landing any face ran.
	return reload
}
