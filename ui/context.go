package ui

import (
	"math"

	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// shell is the root's own state beside the shared context: the status
// line's count, the demo's hint, the projects' word and the frame's memos.
// Held by pointer, as the context, so the model's copies share it.
type shell struct {
	// statusSeq counts status messages, so a fade clears only its own;
	// holdStatus keeps them (tests that read the status after settling).
	statusSeq  int
	holdStatus bool
	// fleetData is the last reading of the spend (fleetRead: there was
	// one), which the Fleet and Inbox panes show and the header and the
	// notices read.
	fleetData uictx.FleetMsg
	fleetRead bool
	// inboxNow is the inbox as last read (inboxSeen: there was a
	// reading), inboxRaw the reading to render again on a resize.
	inboxNow  uictx.Inbox
	inboxSeen bool
	inboxRaw  uictx.InboxData
	// hinted: a key was pressed, so the demo's hint is gone.
	hinted bool

	// several: this is one project of a cockpit over several, whose help
	// lists the keys between them; away is the header's word on the other
	// projects' unread notices (projects.go).
	several bool
	away    string

	tabsDrawn [tabLevels]tabsMemo // the header's tabs at each level (view.go)
	helpDrawn [2]helpMemo         // the footer's keys, alone and beside a status (view.go)
}

// ctx is the context the panes are given now.
func (m *Model) ctx() *uictx.Ctx {
	c := &uictx.Ctx{
		Common: m.Common, D: m.d, Shown: m.pane, Target: m.selection(),
		StateProblems: m.wrk.problems, Paused: m.fleetData.Paused, Reading: m.reading(),
		Running: running(m.wrk.rows), Workers: m.wrk.view(),
		Merge: m.merge.view(), Preview: &m.pv,
	}
	if m.fleetRead {
		c.Fleet = &m.fleetData
	}
	if m.inboxSeen {
		c.Inbox = &m.inboxNow
	}
	if r := m.feed.claims(); r != nil {
		c.Claims, c.View = r.c, r.view
	}
	return c
}

// clockNow is the clock a tick judges the rows at. A hub's sessions take
// it to the whole second, so the sessions that tick within one second
// render that second's rows alike, once between them.
func (m *Model) clockNow() float64 {
	now := m.Opt.Tree.NowSeconds()
	if m.feed.served() {
		return math.Floor(now)
	}
	return now
}

// bodyLine is a body line as View draws it: after the margin, fitted to
// the body and inked; laid out once for a hub's sessions.
func (m *Model) bodyLine(line string) string {
	lay := func() string { return m.Ink(" " + kit.Fit(line, m.Cols)) }
	if m.Opt.Hub == nil {
		return lay()
	}
	_, lines := m.Opt.Hub.Shared()
	return lines.Get(kit.LineKey{S: line, W: m.Cols, Body: true, Ink: m.InkOn}, lay)
}
