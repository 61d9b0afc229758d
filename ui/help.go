package ui

// `?`: every key of the shown pane, the ones that do not apply now greyed
// with the reason syncKeys gave them (a key that is hidden teaches
// nothing), the keys of every pane, the pane's legend and the Merge
// states. Reflowed to the width, and scrolled when taller than the body.

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/panes/merge"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// helpScreen is `?`; off is the first line shown.
type helpScreen struct{ off int }

func (*helpScreen) asks() bool   { return false }
func (*helpScreen) typing() bool { return false }

// key scrolls a help taller than the body; any other key closes it.
func (h *helpScreen) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	if key.Matches(msg, m.Keys.Quit) {
		m.stack.remove(h)
		return m.quit()
	}
	n, vis := len(m.helpLines()), m.helpVisible()
	if d, ok := m.Keys.Step(msg, vis, n); ok && n > vis {
		h.off = max(0, min(h.off+d, n-vis))
		return nil
	}
	m.stack.remove(h)
	return nil
}

func (h *helpScreen) view(m *Model, vis int) []string {
	lines := m.helpLines()
	off := max(0, min(h.off, len(lines)-vis))
	return lines[off:min(len(lines), off+vis)]
}

func (h *helpScreen) footer(m *Model) string {
	n, vis := len(m.helpLines()), m.helpVisible()
	if n <= vis {
		return m.St.Help.Render("any key closes this help")
	}
	off := max(0, min(h.off, n-vis))
	return m.St.Help.Render("lines " + kit.Itoa(off+1) + "–" + kit.Itoa(min(n, off+vis)) + " of " + kit.Itoa(n) +
		" · ↑/↓ pgup/pgdn scroll · any other key closes this help")
}

// helpVisible is how many lines of help the body shows.
func (m *Model) helpVisible() int { return max(1, m.Height-2) }

// helpLines is the whole help for the shown pane, wrapped to the body.
func (m *Model) helpLines() []string {
	w := max(20, m.Cols-1)
	spec := paneSpecs[m.pane]
	out := []string{m.St.Bold.Render(spec.name+" pane ("+kit.Itoa(int(m.pane)+1)+")") +
		m.St.Dim.Render(" · greyed keys do not apply now; the reason is beside them")}
	out = append(out, m.keyRows(uictx.Listed(m.paneOf(m.pane), &m.Keys, paneBindings(&m.Keys, m.pane)), w)...)
	out = append(out, "", m.St.Bold.Render("Every pane"))
	out = append(out, m.flowKeys(everywhere(&m.Keys), w)...)
	if m.several {
		out = append(out, "", m.St.Bold.Render("Projects"))
		out = append(out, m.flowKeys(between(&m.Keys.Projects), w)...)
	}
	if legend := paneHelp(&m.Keys, m.pane).Legends; len(legend) > 0 {
		out = append(out, "")
		out = append(out, wrapLegend(legend, w)...)
	}
	out = append(out, "")
	// The Merge states on every pane: the Plans pane's merge keys act on them too.
	return append(out, wrapLegend([]uictx.Legend{merge.StatesLegend(m.Common)}, w)...)
}

// keyRows is one row per binding: its keys, what it does, and, when it
// does not apply now, why, wrapped under the reason column.
func (m *Model) keyRows(bs []*key.Binding, w int) []string {
	kw, dw := 0, 0
	for _, b := range bs {
		kw, dw = max(kw, ansi.StringWidth(b.Help().Key)), max(dw, ansi.StringWidth(b.Help().Desc))
	}
	indent := 2 + kw + 2 + dw + 2
	var out []string
	for _, b := range bs {
		lead := "  " + kit.Fit(b.Help().Key, kw) + "  "
		if b.Enabled() {
			out = append(out, lead+b.Help().Desc)
			continue
		}
		why := "— " + m.offReason(b)
		if w-indent < 24 {
			// Too narrow for a reason column: the reason below the key.
			out = append(out, m.St.Dim.Render(lead+b.Help().Desc))
			for _, l := range wrapWords(why, w-6) {
				out = append(out, m.St.Dim.Render("      "+l))
			}
			continue
		}
		// Wrapped lines start under the reason, past its dash.
		for i, l := range wrapWords(why, w-indent-2) {
			if i == 0 {
				out = append(out, m.St.Dim.Render(lead+kit.Fit(b.Help().Desc, dw)+"  "+l))
			} else {
				out = append(out, m.St.Dim.Render(strings.Repeat(" ", indent+2)+l))
			}
		}
	}
	return out
}

// flowKeys sets bindings side by side, as many as fit on a line, never
// one across two; one that does not apply now is greyed with its reason.
func (m *Model) flowKeys(bs []*key.Binding, w int) []string {
	var out []string
	line, lineW := "", 0
	for _, b := range bs {
		item := b.Help().Key + " " + b.Help().Desc
		if !b.Enabled() {
			item += " — " + m.offReason(b)
		}
		for i, part := range wrapWords(item, w-2) {
			iw := ansi.StringWidth(part)
			if i > 0 || (lineW > 0 && lineW+3+iw > w-2) {
				out = append(out, "  "+line)
				line, lineW = "", 0
			}
			if lineW > 0 {
				line += " · "
				lineW += 3
			}
			if !b.Enabled() {
				part = m.St.Dim.Render(part)
			}
			line += part
			lineW += iw
		}
	}
	if lineW > 0 {
		out = append(out, "  "+line)
	}
	return out
}

// offReason is why b does not apply now, as syncKeys said it, without the
// verb the status line names it by ("promote: select a draft" → "select a
// draft"); a prefix that is no verb ("read-only: …") stays.
func (m *Model) offReason(b *key.Binding) string {
	why := m.Off[b]
	if why == "" {
		return "not now"
	}
	if verb, rest, ok := strings.Cut(why, ": "); ok && strings.Trim(verb, "abcdefghijklmnopqrstuvwxyz ") == "" {
		return rest
	}
	return why
}

// paneHelp is what pane p says of itself (uictx.Helper), nothing for a
// pane that says nothing; asked of a pane made afresh, as what a pane
// answers to depends on the key map alone.
func paneHelp(k *uictx.KeyMap, p uictx.PaneID) uictx.PaneHelp {
	if h, ok := paneSpecs[p].pkg(p).(uictx.Helper); ok {
		return h.Help(k)
	}
	return uictx.PaneHelp{}
}

// paneBindings are the keys pane p answers to, as `?` lists them: each
// pane's own struct in KeyMap, whole (a test holds them to it).
func paneBindings(k *uictx.KeyMap, p uictx.PaneID) []*key.Binding { return paneHelp(k, p).Keys }

// everywhere are the keys that mean the same in every pane.
func everywhere(k *uictx.KeyMap) []*key.Binding {
	return []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom, &k.NextPane, &k.PrevPane,
		&panesKey, &k.Filter, &k.Escape, &k.Spawn, &k.Notices, &k.Help, &k.Quit}
}

// panesKey stands for the number keys in help: one entry, not seven.
var panesKey = key.NewBinding(key.WithKeys("1"), key.WithHelp("1–"+kit.Itoa(len(paneSpecs)), "a pane by its number"))

// wrapLegend sets each legend under its title, symbols in a column and
// their meaning wrapped beside them.
func wrapLegend(ls []uictx.Legend, w int) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Title+":")
		sw := 0
		for _, r := range l.Rows {
			sw = max(sw, ansi.StringWidth(r[0]))
		}
		for _, r := range l.Rows {
			for i, line := range wrapWords(r[1], max(10, w-4-sw)) {
				sym := ""
				if i == 0 {
					sym = r[0]
				}
				out = append(out, "  "+kit.Fit(sym, sw)+"  "+line)
			}
		}
	}
	return out
}

// demoHint is the demo's first footer: the two keys that set the fleet to
// work, named from the pane list and the key map so they stay true.
func (m *Model) demoHint() string {
	return "Try: " + kit.Itoa(int(workersPane)+1) + " then " + m.Keys.Spawn.Help().Key + " spawns a worker · " +
		kit.Itoa(int(mergePane)+1) + " then " + m.Keys.Merge.Land.Help().Key + " lands a change · " +
		m.Keys.Help.Help().Key + " every key"
}
