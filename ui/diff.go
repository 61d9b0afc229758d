package ui

// `d`: what an agent changed, as the engine computes it when asked (a
// branch against its merge base with the integration branch, and the
// worktree's uncommitted changes apart). The lines are kept raw; each
// frame styles only the ones on screen, so ten thousand changed lines
// scroll as smoothly as ten.

import (
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// The diff view's own keys, beside the shared moves and close.
var (
	diffNextFile = key.NewBinding(key.WithKeys("]", "n"), key.WithHelp("]/n", "next file"))
	diffPrevFile = key.NewBinding(key.WithKeys("[", "N"), key.WithHelp("[/N", "previous file"))
	diffLeft     = key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "scroll left"))
	diffRight    = key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "scroll right"))
	diffRefresh  = key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "compute again"))
)

// diffKind says how a line of the diff view is drawn.
type diffKind uint8

const (
	diffContext diffKind = iota
	diffSection          // a heading: committed, uncommitted, untracked
	diffFile             // a file's header in the patch
	diffAdd
	diffDel
	diffHunk
	diffMeta // git's words about a file, a summary instead of a patch
)

type diffLine struct {
	text string
	kind diffKind
}

// diffView is the overlay: "computing…" until the engine answers, then the
// header, the file lists and the patches.
type diffView struct {
	what string // the target, as the title names it until the diff comes
	req  string // which request a diffMsg must answer
	// again computes the diff once more (r): the agent may have moved on.
	again tea.Cmd
	done  bool
	busy  bool // computing again; the lines shown are the last answer's
	err   string
	title string
	lines []diffLine
	files []int // where each file's header is in lines
	off   int   // the first line shown
	x     int   // columns scrolled sideways
	wide  int   // the longest line's length in bytes, which bounds x
	st    diffStyles
}

// diffStyles are the patch's colours, made once per opening by the
// session's renderer.
type diffStyles struct{ add, del, hunk, file, section, meta lipgloss.Style }

// diffMsg brings the engine's answer for request req.
type diffMsg struct {
	req  string
	diff look.Diff
	err  error
}

// openDiff pushes the view and computes the diff off the UI goroutine.
func (m *Model) openDiff(what, req string, compute func() (look.Diff, error)) tea.Cmd {
	c := func(light, dark string) lipgloss.AdaptiveColor {
		return lipgloss.AdaptiveColor{Light: light, Dark: dark}
	}
	s := m.R.NewStyle
	v := &diffView{what: what, req: req, st: diffStyles{
		add: m.St.Good, del: m.St.Bad, hunk: s().Foreground(c("#0E7490", "#56B6C2")),
		file: m.St.Bold, section: m.St.Title, meta: m.St.Dim,
	}}
	m.stack.push(v)
	v.again = func() tea.Msg {
		d, err := compute()
		return diffMsg{req: req, diff: d, err: err}
	}
	return v.again
}

// diffArrived gives the open view its diff; an answer for a view closed
// meanwhile is dropped.
func (m *Model) diffArrived(msg diffMsg) {
	v, ok := find[*diffView](m.stack)
	if !ok || v.req != msg.req {
		return
	}
	again := v.done
	v.done, v.busy, v.err = true, false, ""
	// The project is known: the reason needs the room.
	short := func(s string) string {
		return termtext.Line(strings.ReplaceAll(s, m.Opt.Tree.Project+string(filepath.Separator), ""))
	}
	if msg.err != nil {
		v.err = short(msg.err.Error())
		return
	}
	msg.diff.Note = short(msg.diff.Note)
	off, x := v.off, v.x
	v.fill(msg.diff)
	if again {
		// Computed again: stay where the operator was reading.
		v.off, v.x = max(0, min(off, len(v.lines)-m.diffVisible())), x
	}
}

// fill lays the diff out as lines: the title, the file lists, then each
// file's patch (a summary for the binary and huge ones).
func (v *diffView) fill(d look.Diff) {
	base := d.Base[:min(len(d.Base), 7)]
	v.title = termtext.Line(d.Branch) + " vs " + termtext.Line(d.Integration) + " at " + base
	if d.Worktree != "" {
		v.title += " · worktree " + termtext.Line(d.Worktree)
	}
	v.lines, v.files = v.lines[:0], v.files[:0]
	add := func(kind diffKind, text string) { v.lines = append(v.lines, diffLine{text, kind}) }
	add(diffSection, "Committed on "+termtext.Line(d.Branch)+" since "+termtext.Line(d.Integration)+" at "+base+": "+fileTotals(d.Committed))
	fileList(add, d.Committed)
	if d.Note != "" {
		add(diffMeta, "· "+d.Note)
	}
	if d.Worktree != "" {
		add(diffContext, "")
		add(diffSection, "Uncommitted in "+termtext.Line(d.Worktree)+" (against its HEAD): "+fileTotals(d.Uncommitted))
		fileList(add, d.Uncommitted)
		add(diffSection, "Untracked: "+kit.Plural(len(d.Untracked), "file", "files"))
		for _, u := range d.Untracked {
			n := ""
			if u.Lines >= 0 {
				n = kit.Plural(u.Lines, "line", "lines")
			}
			add(diffContext, kit.FitRight(n, 13)+"  "+u.Path)
		}
	}
	v.patches(d.Committed, "")
	v.patches(d.Uncommitted, " (uncommitted)")
	if len(d.Committed)+len(d.Uncommitted)+len(d.Untracked) == 0 {
		add(diffMeta, "· nothing changed since "+termtext.Line(d.Integration))
	}
	v.off, v.x, v.wide = 0, 0, 0
	for _, l := range v.lines {
		v.wide = max(v.wide, len(l.text))
	}
}

// fileTotals is "3 files, +12 −4".
func fileTotals(files []look.FileDiff) string {
	a, del := 0, 0
	for _, f := range files {
		a, del = a+f.Added, del+f.Deleted
	}
	return kit.Plural(len(files), "file", "files") + ", +" + kit.Itoa(a) + " −" + kit.Itoa(del)
}

// fileList is one line per file: its counts and its path.
func fileList(add func(diffKind, string), files []look.FileDiff) {
	for _, f := range files {
		counts := kit.FitRight("+"+kit.Itoa(f.Added), 7) + " " + kit.FitRight("−"+kit.Itoa(f.Deleted), 6)
		if f.Binary {
			counts = kit.FitRight("binary", 14)
		}
		line := counts + "  " + filePath(f)
		if f.Summary != "" && !f.Binary {
			line += "  (" + f.Summary + ")"
		}
		add(diffContext, line)
	}
}

// patches adds each file's header and patch lines.
func (v *diffView) patches(files []look.FileDiff, tag string) {
	for _, f := range files {
		v.lines = append(v.lines, diffLine{"", diffContext})
		v.files = append(v.files, len(v.lines))
		head := "━━ " + filePath(f) + tag
		if !f.Binary {
			head += "  +" + kit.Itoa(f.Added) + " −" + kit.Itoa(f.Deleted)
		}
		v.lines = append(v.lines, diffLine{head, diffFile})
		for _, l := range f.Meta {
			v.lines = append(v.lines, diffLine{l, diffMeta})
		}
		if f.Summary != "" {
			v.lines = append(v.lines, diffLine{"· " + f.Summary, diffMeta})
		}
		for _, l := range f.Lines {
			v.lines = append(v.lines, diffLine{l, patchKind(l)})
		}
	}
}

// filePath is a file's path, "from → to" when it was renamed.
func filePath(f look.FileDiff) string {
	if f.From != "" {
		return f.From + " → " + f.Path
	}
	return f.Path
}

func patchKind(l string) diffKind {
	switch {
	case strings.HasPrefix(l, "@@"):
		return diffHunk
	case strings.HasPrefix(l, "+"):
		return diffAdd
	case strings.HasPrefix(l, "-"):
		return diffDel
	case strings.HasPrefix(l, `\`):
		return diffMeta
	}
	return diffContext
}

func (*diffView) asks() bool   { return false }
func (*diffView) typing() bool { return false }

// diffVisible is how many lines the diff box shows: the body less its
// border.
func (m *Model) diffVisible() int { return max(1, m.Height-2-2) }

func (v *diffView) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	k := &m.Keys
	vis := m.diffVisible()
	if d, ok := k.Step(msg, vis, len(v.lines)); ok {
		v.off = max(0, min(v.off+d, len(v.lines)-vis))
		return nil
	}
	switch {
	case key.Matches(msg, k.Interrupt):
		return m.quit()
	case key.Matches(msg, k.Close):
		m.stack.remove(v)
		return nil
	case key.Matches(msg, diffRefresh):
		if v.done && !v.busy {
			v.busy = true
			return v.again
		}
		return nil
	case key.Matches(msg, diffLeft):
		v.x = max(0, v.x-m.Cols/2)
	case key.Matches(msg, diffRight):
		v.x = max(0, min(v.x+m.Cols/2, v.wide-m.Cols/2))
	case key.Matches(msg, diffNextFile):
		for _, i := range v.files {
			if i > v.off {
				v.off = i
				break
			}
		}
	case key.Matches(msg, diffPrevFile):
		for j := len(v.files) - 1; j >= 0; j-- {
			if v.files[j] < v.off {
				v.off = v.files[j]
				break
			}
		}
	}
	v.off = max(0, min(v.off, len(v.lines)-vis))
	return nil
}

func (v *diffView) view(m *Model, h int) []string {
	title, hint := "diff of "+v.what, ""
	var body []string
	switch {
	case !v.done:
		body = []string{" " + m.St.Dim.Render("computing the diff of "+v.what+"…")}
	case v.err != "":
		body = []string{" ✗ " + v.err}
	default:
		title = v.title
		vis := max(0, h-2)
		end := min(len(v.lines), v.off+vis)
		hint = kit.Itoa(v.off+1) + "–" + kit.Itoa(end) + " of " + kit.Itoa(len(v.lines))
		if v.x > 0 {
			hint += " · →" + kit.Itoa(v.x)
		}
		if v.busy {
			hint = "computing again… · " + hint
		}
		if ansi.StringWidth(title)+ansi.StringWidth(hint)+6 > m.Cols {
			// Narrow: the position matters more than the worktree, which
			// the uncommitted heading names too.
			title, _, _ = strings.Cut(title, " · ")
		}
		inner := max(0, m.Cols-2-1)
		body = make([]string, 0, end-v.off)
		for _, l := range v.lines[v.off:end] {
			body = append(body, " "+v.styled(m, l, inner))
		}
	}
	return m.Box(title, hint, body, m.Cols, h, true)
}

// styled draws one line cut to w cells: cut first, so a long line costs
// only what shows of it; plain (NO_COLOR) keeps git's symbols alone.
func (v *diffView) styled(m *Model, l diffLine, w int) string {
	text := l.text
	if v.x > 0 {
		text = ansi.TruncateLeft(text, v.x, "…")
	}
	if len(text) > w {
		text = ansi.Truncate(text, w, "…")
	}
	if m.Plain {
		return text
	}
	switch l.kind {
	case diffAdd:
		return v.st.add.Render(text)
	case diffDel:
		return v.st.del.Render(text)
	case diffHunk:
		return v.st.hunk.Render(text)
	case diffFile:
		return v.st.file.Render(text)
	case diffSection:
		return v.st.section.Render(text)
	case diffMeta:
		return v.st.meta.Render(text)
	}
	return text
}

// diffHelp is the footer's reminder in the diff view.
func (m *Model) diffHelp() string {
	if !m.Wide {
		return m.St.Help.Render("↑/↓ ←/→ pgup/pgdn scroll · g/G · ]/[ next/previous file · r again · esc close")
	}
	return m.St.Help.Render("↑/↓ pgup/pgdn scroll · ←/→ sideways · g/G top/end · ]/n [/N next/previous file · r compute again · esc close")
}
