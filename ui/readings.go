package ui

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// The Workers and Merge panes' readings, held by the root: asked for
// one at a time (refresh), read off the UI goroutine, and passed to the
// panes through their context.

// workersMsg is one reading of the state files; radar says the overlap
// radar looked too, and overlaps is what it saw.
type workersMsg struct {
	states   []look.State
	problems []string
	radar    bool
	overlaps []look.Overlap
}

// readWorkers is workersCmd's reading, shared with the hub.
func readWorkers(project string, radar bool) workersMsg {
	states, problems := look.ReadStates(project)
	for i := range problems {
		problems[i] = strings.ReplaceAll(problems[i], project+string(filepath.Separator), "")
	}
	msg := workersMsg{states: states, problems: problems, radar: radar}
	if radar {
		msg.overlaps = look.Overlaps(project, states)
	}
	return msg
}

// requestWorkers reads the state files, one reading at a time; the
// overlap radar looks with it at most every radarEvery, and a reading
// without it leaves the radar due (the clock's tick asks again).
func (m *Model) requestWorkers() tea.Cmd {
	if m.sub != nil {
		// The hub reads, and runs the radar at its own pace.
		m.sub.poke(kindWorkers.set())
		return nil
	}
	if m.wrkReq.busy {
		return m.wrkReq.request(nil)
	}
	now := time.Now()
	radar := now.Sub(m.wrk.radarAt) >= radarEvery
	if radar {
		m.wrk.radarAt, m.wrk.radarDue = now, false
	} else {
		m.wrk.radarDue = true
	}
	return m.wrkReq.request(workersCmd(m.Opt.Tree.Project, radar))
}

func (m *Model) workersLoaded(msg workersMsg) tea.Cmd {
	again := m.wrkReq.done()
	same := slices.Equal(m.wrk.problems, msg.problems)
	m.wrk.states, m.wrk.problems = msg.states, msg.problems
	if msg.radar {
		m.wrk.overlaps = msg.overlaps
	}
	m.wrk.judge(m.Opt.Tree.Now())
	if same {
		c := m.ctx()
		m.wrk.Rebuild(c)
		m.paneOf(fleetPane).Rebuild(c) // it lists the running runs' spend
		m.syncKeys()
	} else {
		m.rebuild() // the Events pane lists unreadable state files
	}
	cmds := []tea.Cmd{m.lookForNotices(fromWorkers)}
	if again {
		cmds = append(cmds, m.requestWorkers())
	}
	if m.workersRunning() && !m.ticking {
		m.ticking = true
		cmds = append(cmds, tickCmd())
	}
	return tea.Batch(cmds...)
}

// mergeMsg is one reading of the candidates and the queue.
type mergeMsg struct {
	listing landing.Listing
	err     error
}

// readMerge is mergeCmd's reading, shared with the hub: queue entries
// first, by place; the engine's order otherwise. Sorted here, once, since
// sessions share the listing.
func readMerge(project string) mergeMsg {
	l, err := landing.List(project)
	if err == nil {
		slices.SortStableFunc(l.Items, byPosition)
	}
	return mergeMsg{listing: l, err: err}
}

// requestMerge reads the queue, one reading at a time.
func (m *Model) requestMerge() tea.Cmd {
	if m.sub != nil {
		m.sub.poke(kindMerge.set())
		return nil
	}
	return m.merge.req.request(mergeCmd(m.Opt.Tree.Project))
}

// mergeIfShown reads the queue when the pane shows it; hidden, it is read
// when shown again.
func (m *Model) mergeIfShown() tea.Cmd {
	if m.mergeShown() {
		return m.requestMerge()
	}
	return nil
}

func (m *Model) mergeLoaded(msg mergeMsg) tea.Cmd {
	l := &m.merge
	again := l.req.done()
	l.loaded, l.err = true, msg.err
	if msg.err == nil {
		l.listing = msg.listing
		if !slices.IsSortedFunc(l.listing.Items, byPosition) {
			// Sorted on a copy: a hub's listing is every session's.
			l.listing.Items = slices.Clone(l.listing.Items)
			slices.SortStableFunc(l.listing.Items, byPosition)
		}
	}
	l.Rebuild(m.ctx())
	// A notice's candidate is looked for in one reading: later, the
	// cursor is the operator's.
	l.want = ""
	m.syncKeys()
	cmds := []tea.Cmd{m.lookForNotices(fromMerge)}
	if again {
		cmds = append(cmds, m.requestMerge())
	}
	return tea.Batch(append(cmds, m.mergeTick())...)
}
