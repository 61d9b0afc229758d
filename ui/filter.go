package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
)

// paneFilter is one pane's filter: the text typed after `/` and whether it
// is being typed now. Every pane keeps its own, so narrowing the events
// does not empty the plans table; the text applies until esc clears it.
type paneFilter struct {
	filter    textinput.Model
	filtering bool
}

func (f *paneFilter) filterOf() *paneFilter { return f }

// needle is the filter as rows are matched against it: lower case, trimmed.
func (f *paneFilter) needle() string { return strings.ToLower(strings.TrimSpace(f.filter.Value())) }

// active reports whether the filter narrows the pane's rows.
func (f *paneFilter) active() bool { return f.needle() != "" }

// filterHints is what the text field says it matches, per pane.
var filterHints = [paneCount]string{
	plansPane:     "slug, title, model or agent, in every lane",
	leasesPane:    "plan, owner or origin",
	worktreesPane: "agent, branch or path",
	workersPane:   "agent, tier, model, plan, state or note",
	eventsPane:    "event, plan, lane, agent or reason",
}

// initFilters gives every pane its text field, made by the session's renderer.
func (m *Model) initFilters() {
	for p := range paneCount {
		f := m.paneOf(p).filterOf()
		f.filter = m.textField()
		f.filter.Prompt = "/ "
		f.filter.Placeholder = filterHints[p]
	}
}

// typingFilter is the filter being typed in, or nil.
func (m *Model) typingFilter() *paneFilter {
	if f := m.paneOf(m.pane).filterOf(); f.filtering {
		return f
	}
	return nil
}

// startFilter opens the shown pane's filter for typing.
func (m *Model) startFilter() tea.Cmd {
	f := m.paneOf(m.pane).filterOf()
	f.filtering = true
	return f.filter.Focus()
}

// filterKey types into the shown pane's filter; the rows narrow with each
// key. enter keeps the text (it stays shown while it applies), esc drops it.
func (m *Model) filterKey(msg tea.KeyMsg) tea.Cmd {
	f := m.paneOf(m.pane).filterOf()
	var cmd tea.Cmd
	switch {
	case key.Matches(msg, m.keys.Ask.Cancel):
		f.filtering = false
		f.filter.Blur()
		f.filter.SetValue("")
	case key.Matches(msg, m.keys.Ask.Confirm):
		f.filtering = false
		f.filter.Blur()
		if m.pane == plansPane {
			m.plans.laneWithMatches()
		}
	default:
		f.filter, cmd = f.filter.Update(msg)
	}
	m.paneOf(m.pane).rebuild(m.ctx())
	m.syncKeys()
	return tea.Batch(cmd, m.schedulePreview())
}

// clearFilter drops the shown pane's filter; false when it had none.
func (m *Model) clearFilter() bool {
	f := m.paneOf(m.pane).filterOf()
	if f.filter.Value() == "" {
		return false
	}
	f.filter.SetValue("")
	m.paneOf(m.pane).rebuild(m.ctx())
	m.syncKeys()
	return true
}

// filterNote is the footer's reminder of the shown pane's filter while it
// applies.
func (m *Model) filterNote() string {
	f := m.paneOf(m.pane).filterOf()
	if !f.active() {
		return ""
	}
	return "filter: " + f.filter.Value() + " (esc clears)"
}

// anyContains reports whether one of ss contains the needle (lower case).
func anyContains(needle string, ss ...string) bool {
	if needle == "" {
		return true
	}
	for _, s := range ss {
		if containsFold(s, needle) {
			return true
		}
	}
	return false
}

// containsFold is strings.Contains on lower-cased s, without allocating
// for ASCII text, which every row of ten thousand mostly is.
func containsFold(s, needle string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return strings.Contains(strings.ToLower(s), needle)
		}
	}
	n := len(needle)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for j < n && lowerASCII(s[i+j]) == needle[j] {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

func lowerASCII(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// filterTitle is a pane's box title, naming the filter while it applies.
func (c *common) filterTitle(name string, f *paneFilter) string {
	if !f.active() {
		return name
	}
	return name + " · /" + termtext.Line(f.filter.Value())
}

// emptyText says why a pane has no rows: nothing matches, or empty.
func (c *common) emptyText(f *paneFilter, empty string) string {
	if f.active() {
		return "nothing matches /" + termtext.Line(f.filter.Value()) + " (esc clears)"
	}
	return empty
}
