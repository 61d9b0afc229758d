package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"

	"fleetwatch/internal/termtext"
)

// View draws the screen: a header, the body, and one status line. It only
// slices rows rendered earlier.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	bodyH := max(0, m.height-2)
	// The top overlay covers the body; without one, the shown pane.
	var body []string
	if top := m.stack.top(); top != nil {
		body = top.view(&m, bodyH)
	} else {
		body = m.paneOf(m.pane).view(m.ctx(), bodyH)
	}
	lines := make([]string, 0, m.height)
	lines = append(lines, m.ink(m.headerLine()))
	for i := 0; i < bodyH; i++ {
		line := ""
		if i < len(body) {
			line = body[i]
		}
		// The margin also makes every line start in the default colour, so
		// tools that read the screen line by line (tmux captures) lose nothing.
		lines = append(lines, m.bodyLine(line))
	}
	lines = append(lines, m.ink(m.footerLine()))
	return strings.Join(lines[:min(len(lines), m.height)], "\n")
}

// ink gives plain text the Text colour explicitly, after every reset, so
// nothing on screen is left to the terminal's default colour. Readers that
// take the screen apart line by line (tmux captures, screenshot tools) then
// see the colours the terminal shows.
func (c *common) ink(line string) string {
	if c.inkOn == "" {
		return line
	}
	return c.inkOn + strings.ReplaceAll(line, "\x1b[0m", "\x1b[0m"+c.inkOn) + "\x1b[0m"
}

func (m *Model) headerLine() string {
	left := " fleetwatch · " + termtext.Line(baseName(m.opt.Tree.Project))
	if !m.wide {
		left = " " + termtext.Line(baseName(m.opt.Tree.Project))
	}
	// Before the problem and the counts: a viewer always sees it.
	left += m.readOnlyMark()
	// Where the claims are and how old their view is, before the counts.
	left += m.remoteMark()
	// A problem comes before the counts, so a narrow header still shows it.
	if m.problem != "" || m.loadErr != nil {
		p := m.problem
		if m.loadErr != nil {
			p = m.loadErr.Error()
		}
		warn := " · ⚠ " + termtext.Line(p)
		if !m.plain {
			warn = m.st.Bad.Render(warn)
		}
		left += warn
	}
	// Before the counts: what needs a person must survive a narrow header.
	left += m.noticeCount() + m.away + m.fleetStop()
	// The day's spend before the counts: a narrow header keeps it.
	left += m.spentToday()
	if m.d != nil {
		b := m.d.board
		left += " · " + plural(len(b.Rows), "plan", "plans")
		expired := 0
		for i := range b.Leases {
			if !b.Leases[i].Active(m.now) {
				expired++
			}
		}
		left += " · " + plural(len(b.Leases), "lease", "leases")
		if expired > 0 {
			left += " (" + itoa(expired) + " expired)"
		}
	}
	if m.workersShown() {
		left += " · " + m.workerCounts()
	}
	right := m.tabs(false)
	room := m.width - ansi.StringWidth(right) - 1
	if room < ansi.StringWidth(left) {
		// The other panes by number alone, so the counts fit.
		right = m.tabs(true)
		room = m.width - ansi.StringWidth(right) - 1
	}
	if room < 20 {
		return fit(left, m.width)
	}
	return fit(m.st.Bar.Render(left), room) + " " + right
}

// tabs names the panes with their keys, the current one bracketed; compact
// leaves only the current one's name.
func (m *Model) tabs(compact bool) string {
	// Drawn once per pane and width class: every View draws the header,
	// and lipgloss is most of its cost.
	memo := &m.tabsDrawn[0]
	if compact {
		memo = &m.tabsDrawn[1]
	}
	if memo.text == "" || memo.pane != m.pane || memo.wide != m.wide {
		*memo = tabsMemo{pane: m.pane, wide: m.wide, text: m.drawTabs(compact)}
	}
	return memo.text
}

// tabsMemo is the tabs as last drawn, for the pane and width they show.
type tabsMemo struct {
	pane pane
	wide bool
	text string
}

func (m *Model) drawTabs(compact bool) string {
	var tabs []string
	for i, spec := range paneSpecs {
		name := spec.name
		if !m.wide {
			name = spec.short
		}
		label := itoa(i+1) + " " + name
		if compact && pane(i) != m.pane {
			label = itoa(i + 1)
		}
		lead := ""
		if compact && i > 0 {
			lead = " "
		}
		switch {
		case pane(i) == m.pane && m.plain:
			label = lead + "[" + label + "]"
		case pane(i) == m.pane:
			label = lead + m.st.TabActive.Render("["+label+"]")
		case m.wide:
			label = m.st.Tab.Render(" " + label + " ")
		default:
			label = m.st.Tab.Render(" " + label)
		}
		tabs = append(tabs, label)
	}
	return strings.Join(tabs, "") + " "
}

func (m *Model) footerLine() string {
	if f := m.typingFilter(); f != nil {
		return fit(f.filter.View(), m.width)
	}
	helpText := m.shortHelp(m.width - 1)
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
	if status == "" && m.opt.Demo && !m.hinted {
		status = m.demoHint()
	}
	if status == "" {
		return fit(" "+helpText, m.width)
	}
	if !m.plain {
		if m.statusErr {
			status = m.st.StatusErr.Render(status)
		} else {
			status = m.st.StatusOK.Render(status)
		}
	}
	room := m.width - ansi.StringWidth(status) - 3
	if room < 20 {
		return fit(" "+status, m.width)
	}
	if ansi.StringWidth(helpText) > room && m.stack.top() == nil {
		// Fewer keys, each whole, beside the status.
		helpText = m.shortHelp(room)
	}
	if ansi.StringWidth(helpText) > room {
		helpText = ansi.Truncate(helpText, room, "…")
	}
	return " " + status + strings.Repeat(" ", max(1, m.width-1-ansi.StringWidth(status)-ansi.StringWidth(helpText))) + helpText
}

// shortHelp is the footer's reminder of the keys that apply now, in room
// cells, drawn again only when they or the room change (every View draws
// the footer).
func (m *Model) shortHelp(room int) string {
	all := m.keys.ShortHelp()
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
	if room != m.width-1 {
		memo = &m.helpDrawn[1]
	}
	if memo.text != "" && memo.on == on && memo.width == room && memo.wide == m.wide {
		return memo.text
	}
	if !m.wide && len(keys) > 4 {
		// Narrow: the three most useful keys that apply, and `?`.
		keys = append(keys[:3:3], m.keys.Help)
	}
	helpText := m.help.ShortHelpView(keys)
	// Wide: as many as fit, the last ones going first; `?` and q stay.
	for len(keys) > 3 && ansi.StringWidth(helpText) > room {
		keys = append(keys[:len(keys)-3], keys[len(keys)-2:]...)
		helpText = m.help.ShortHelpView(keys)
	}
	*memo = helpMemo{on: on, width: room, wide: m.wide, text: helpText}
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

// tableBox draws a pane's table: boxed on wide terminals, bare on narrow.
func (c *paneCtx) tableBox(title, header string, t *table, h int, empty string) []string {
	rows := c.lines(t, "")
	if t.len() == 0 {
		rows[0] = "  " + c.st.Dim.Render(empty)
	}
	body := append([]string{c.st.Header.Render(header)}, rows...)
	if !c.wide {
		return body
	}
	hint := t.scrollHint()
	if hint == "" {
		hint = itoa(t.len())
	}
	return c.box(title, hint, body, c.cols, h, true)
}

func baseName(p string) string {
	if i := strings.LastIndexByte(strings.TrimRight(p, "/"), '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// readerHelp is the reader's footer: only the keys that work there.
func (m *Model) readerHelp() string {
	k := &m.keys
	return m.help.ShortHelpView([]key.Binding{
		key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "scroll")),
		key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("pgup/pgdn", "page")),
		k.Top, k.Bottom, k.Close,
	})
}
