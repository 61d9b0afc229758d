package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// View draws the screen: a header, the body, and one status line. It only
// slices rows rendered earlier.
func (m Model) View() string {
	if m.Width <= 0 || m.Height <= 0 {
		return ""
	}
	bodyH := max(0, m.Height-2)
	// The top overlay covers the body; without one, the shown pane.
	var body []string
	if top := m.stack.top(); top != nil {
		body = top.view(&m, bodyH)
	} else {
		body = m.paneOf(m.pane).View(m.ctx(), bodyH)
	}
	lines := make([]string, 0, m.Height)
	lines = append(lines, m.Ink(m.headerLine()))
	for i := 0; i < bodyH; i++ {
		line := ""
		if i < len(body) {
			line = body[i]
		}
		// The margin also makes every line start in the default colour, so
		// tools that read the screen line by line (tmux captures) lose nothing.
		lines = append(lines, m.bodyLine(line))
	}
	lines = append(lines, m.Ink(m.footerLine()))
	return strings.Join(lines[:min(len(lines), m.Height)], "\n")
}

func (m *Model) headerLine() string {
	head, counts := m.headerHead(), m.headerCounts()
	right, shown := m.tabsFor(head, counts)
	room := m.Width - ansi.StringWidth(right) - 1
	if room < 20 {
		s, _ := m.leftIn(head, counts, m.Width)
		return kit.Fit(s, m.Width)
	}
	return kit.Fit(m.St.Bar.Render(shown), room) + " " + right
}

// headerHead is the header's left side before the counts: the project and
// what must survive a narrow header.
func (m *Model) headerHead() string {
	left := " " + termtext.Line(baseName(m.Opt.Tree.Project))
	// Before the problem and the counts: a viewer always sees it.
	left += m.readOnlyMark()
	// Where the claims are and how old their view is, before the counts.
	left += m.feed.claims().mark(m.Common)
	// A problem comes before the counts, so a narrow header still shows it.
	if m.problem != "" || m.loadErr != nil {
		p := m.problem
		if m.loadErr != nil {
			p = m.loadErr.Error()
		}
		warn := " · ⚠ " + termtext.Line(p)
		if !m.Plain {
			warn = m.St.Bad.Render(warn)
		}
		left += warn
	}
	// Before the counts: what needs a person must survive a narrow header.
	left += m.noticeCount() + m.away + m.fleetStop()
	// The day's spend before the counts: a narrow header keeps it.
	return left + m.spentToday()
}

// headerCount is one of the header's counts, and its alarm alone for a
// narrow header ("1 expired"), "" when it raises none.
type headerCount struct{ full, short string }

// headerCounts is the plans, leases and workers, each a part the header
// keeps whole, shortens to its alarm or leaves out.
func (m *Model) headerCounts() []headerCount {
	var counts []headerCount
	if m.d != nil {
		b := m.d.Board
		expired := 0
		for i := range b.Leases {
			if !b.Leases[i].Active(m.Now) {
				expired++
			}
		}
		leases := headerCount{full: kit.Plural(len(b.Leases), "lease", "leases")}
		if expired > 0 {
			leases.short = kit.Itoa(expired) + " expired"
			leases.full += " (" + leases.short + ")"
		}
		counts = append(counts, headerCount{full: kit.Plural(len(b.Rows), "plan", "plans")}, leases)
	}
	if m.wrk.shown() {
		full, short := m.wrk.counts()
		counts = append(counts, headerCount{full, short})
	}
	return counts
}

// tabLevel is how much of each pane's name the tabs show.
type tabLevel int

const (
	tabsFull    tabLevel = iota // Worktrees (Trees on a narrow screen)
	tabsShort                   // Trees, closer together
	tabsTiny                    // Tre
	tabsNumbers                 // 3
	tabLevels
)

// tinyTabs is the name's length at tabsTiny: enough to tell the panes apart.
const tinyTabs = 3

// leftFloor is the room the header's left side keeps before the tabs lose
// their names: the project and the first count.
const leftFloor = 20

// tabsFor is the tabs for a header whose left side is head and counts,
// and that side as it shows beside them: the names that keep the most of
// it, the longest among those; numbers alone only when even three letters
// a name would cut head. The current pane's name is whole.
func (m *Model) tabsFor(head string, counts []headerCount) (tabs, shown string) {
	kept := -1
	for l := tabsFull; l <= tabsNumbers; l++ {
		right := m.tabs(l)
		room := m.Width - ansi.StringWidth(right) - 1
		// Numbers alone only for a head (a problem, a notice) that names
		// cannot leave whole.
		if room < leftFloor || (l == tabsNumbers && kept >= ansi.StringWidth(head)) {
			continue
		}
		if s, k := m.leftIn(head, counts, room); k > kept {
			tabs, shown, kept = right, s, k
		}
	}
	if kept < 0 {
		tabs = m.tabs(tabsNumbers)
		shown, _ = m.leftIn(head, counts, m.Width-ansi.StringWidth(tabs)-1)
	}
	return tabs, shown
}

// leftIn is the header's left side in room cells, and how much of it
// beyond the program's name shows: whole, else without the program's
// name, else each count whole or as its alarm where it fits, "…" for
// what is left out; head alone is cut by fit.
func (m *Model) leftIn(head string, counts []headerCount, room int) (string, int) {
	all := head
	for _, c := range counts {
		all += " · " + c.full
	}
	w := ansi.StringWidth(all)
	if whole := " fleetwatch ·" + all; m.Wide && ansi.StringWidth(whole) <= room {
		return whole, w
	}
	if w <= room {
		return all, w
	}
	// An alarm outranks a count: first the alarms that fit, then each
	// count whole where the room allows.
	form := make([]string, len(counts))
	width := func() int {
		n := ansi.StringWidth(head) + 2 // " …"
		for _, f := range form {
			if f != "" {
				n += 3 + ansi.StringWidth(f)
			}
		}
		return n
	}
	try := func(i int, f string) {
		old := form[i]
		if form[i] = f; width() > room {
			form[i] = old
		}
	}
	for i, c := range counts {
		if c.short != "" {
			try(i, c.short)
		}
	}
	for i, c := range counts {
		try(i, c.full)
	}
	shown, cut := head, false
	for i, f := range form {
		if f != "" {
			shown += " · " + f
		}
		cut = cut || f != counts[i].full
	}
	if cut && ansi.StringWidth(shown)+2 <= room {
		shown += " …"
	}
	return shown, min(ansi.StringWidth(shown), room)
}

// tabs names the panes with their keys, the current one bracketed and
// whole; level says how much of the others' names shows.
func (m *Model) tabs(level tabLevel) string {
	// Drawn once per pane, width class and level: every View draws the
	// header, and lipgloss is most of its cost.
	memo := &m.tabsDrawn[level]
	if memo.text == "" || memo.pane != m.pane || memo.wide != m.Wide {
		*memo = tabsMemo{pane: m.pane, wide: m.Wide, text: m.drawTabs(level)}
	}
	return memo.text
}

// tabsMemo is the tabs as last drawn, for the pane and width they show.
type tabsMemo struct {
	pane uictx.PaneID
	wide bool
	text string
}

func (m *Model) drawTabs(level tabLevel) string {
	var tabs []string
	compact := level != tabsFull
	for i, spec := range paneSpecs {
		name := spec.name
		if !m.Wide || compact {
			name = spec.short
		}
		label := kit.Itoa(i+1) + " " + name
		switch {
		case uictx.PaneID(i) == m.pane:
		case level == tabsTiny:
			label = kit.Itoa(i+1) + " " + string([]rune(name)[:min(tinyTabs, len([]rune(name)))])
		case level == tabsNumbers:
			label = kit.Itoa(i + 1)
		}
		lead := ""
		if compact && i > 0 {
			lead = " "
		}
		switch {
		case uictx.PaneID(i) == m.pane && m.Plain:
			label = lead + "[" + label + "]"
		case uictx.PaneID(i) == m.pane:
			label = lead + m.St.TabActive.Render("["+label+"]")
		case m.Wide && !compact:
			label = m.St.Tab.Render(" " + label + " ")
		default:
			label = m.St.Tab.Render(" " + label)
		}
		tabs = append(tabs, label)
	}
	return strings.Join(tabs, "") + " "
}

func (m *Model) footerLine() string {
	if f := m.typingFilter(); f != nil {
		return kit.Fit(f.Input.View(), m.Width)
	}
	helpText := m.shortHelp(m.Width - 1)
	if top := m.stack.top(); top != nil {
		// Over the panes their keys do not work: an overlay says its own,
		// a question carries them in its box.
		helpText = ""
		if f, ok := top.(footed); ok {
			helpText = f.footer(m)
		}
	}
	status := m.status
	if status == "" && m.stack.top() == nil {
		status = termtext.Line(m.filterNote())
	}
	if status == "" && m.Opt.Demo && !m.hinted {
		status = m.demoHint()
	}
	if status == "" {
		return kit.Fit(" "+helpText, m.Width)
	}
	if !m.Plain {
		if m.statusErr {
			status = m.St.StatusErr.Render(status)
		} else {
			status = m.St.StatusOK.Render(status)
		}
	}
	room := m.Width - ansi.StringWidth(status) - 3
	if room < 20 {
		return kit.Fit(" "+status, m.Width)
	}
	if ansi.StringWidth(helpText) > room && m.stack.top() == nil {
		// Fewer keys, each whole, beside the status.
		helpText = m.shortHelp(room)
	}
	if ansi.StringWidth(helpText) > room {
		helpText = ansi.Truncate(helpText, room, "…")
	}
	return " " + status + strings.Repeat(" ", max(1, m.Width-1-ansi.StringWidth(status)-ansi.StringWidth(helpText))) + helpText
}

// shortHelp is the footer's reminder of the keys that apply now, in room
// cells, drawn again only when they or the room change (every View draws
// the footer).
func (m *Model) shortHelp(room int) string {
	all := m.Keys.ShortHelp()
	var on uint64
	keys := make([]key.Binding, 0, len(all))
	for i, b := range all {
		if b.Enabled() {
			keys = append(keys, b)
			on |= 1 << (i % 64)
		}
	}
	// Two drawings kept: the whole line, and beside a status.
	memo := &m.helpDrawn[0]
	if room != m.Width-1 {
		memo = &m.helpDrawn[1]
	}
	if memo.text != "" && memo.on == on && memo.width == room && memo.wide == m.Wide {
		return memo.text
	}
	if !m.Wide && len(keys) > 4 {
		// Narrow: the three most useful keys that apply, and `?`.
		keys = append(keys[:3:3], m.Keys.Help)
	}
	helpText := m.Help.ShortHelpView(keys)
	// Wide: as many as fit, the last ones going first; `?` and q stay.
	for len(keys) > 3 && ansi.StringWidth(helpText) > room {
		keys = append(keys[:len(keys)-3], keys[len(keys)-2:]...)
		helpText = m.Help.ShortHelpView(keys)
	}
	*memo = helpMemo{on: on, width: room, wide: m.Wide, text: helpText}
	return helpText
}

// helpMemo is the footer's help as last drawn: for which keys (a bit per
// ShortHelp entry) in how much room.
type helpMemo struct {
	on    uint64
	width int
	wide  bool
	text  string
}

func baseName(p string) string {
	if i := strings.LastIndexByte(strings.TrimRight(p, "/"), '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// readerHelp is the reader's footer: only the keys that work there.
func (m *Model) readerHelp() string {
	k := &m.Keys
	return m.Help.ShortHelpView([]key.Binding{
		key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "scroll")),
		key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("pgup/pgdn", "page")),
		k.Top, k.Bottom, k.Close,
	})
}

// spentToday is the header's word on the day's spend, "" before any run
// was recorded today.
func (m *Model) spentToday() string {
	t := m.fleetData.Fleet.Today
	if t.Tokens == 0 && t.USD == 0 {
		return ""
	}
	return " · " + kit.USD(t.USD) + " today"
}

// fleetStop is the header's notice of a fleet-wide stop of claims: its
// first clause (the Fleet pane says it whole).
func (m *Model) fleetStop() string {
	p := m.fleetData.Fleet.Problem
	if p == "" {
		return ""
	}
	head, _, _ := strings.Cut(p, ": ")
	warn := " · ⚠ claims stopped: " + termtext.Line(head)
	if !m.Plain {
		warn = m.St.Bad.Render(warn)
	}
	return warn
}
