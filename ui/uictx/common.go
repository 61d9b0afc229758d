package uictx

import (
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/ui/kit"
)

// Common is the context every pane and overlay shares, as soft-serve's
// Common.Common: the options, the renderer the styles are made from (one
// per SSH session), the key map, the sizes and the clock. Panes read it
// instead of globals.
type Common struct {
	Opt   Options
	R     *lipgloss.Renderer
	Keys  KeyMap
	St    kit.Styles
	Help  help.Model
	Plain bool   // no colour at all: skip styling work
	InkOn string // the escape code that sets the Text colour
	RowOn string // the escape code that starts the SelectedRow style
	Why   map[string]string
	// Off is why each binding that is Off does not apply now, for `?`.
	Off map[*key.Binding]string

	Width, Height int
	Cols          int // the body's width: one column is kept as a left margin
	Wide          bool
	Now           float64 // the clock the rows were judged at, Unix seconds
}

// TextField is a text field styled by the session's renderer rather than
// the process's default one, so each SSH session gets its own profile.
func (c *Common) TextField() textinput.Model {
	in := textinput.New()
	s := c.R.NewStyle
	in.PromptStyle, in.TextStyle = s(), s()
	in.PlaceholderStyle = s().Foreground(lipgloss.Color("240"))
	in.CompletionStyle = in.PlaceholderStyle
	in.Cursor.Style, in.Cursor.TextStyle = s(), s()
	return in
}

// Highlight marks a selected line without hiding the colours inside it:
// a background renewed after every reset inside; with no colour at all
// (NO_COLOR, the Ascii profile drops every style) reverse video, written
// directly, so the selection is more than the ▸ in its gutter.
func (c *Common) Highlight(line string) string {
	if c.Plain || c.RowOn == "" {
		return ReverseOn + line + ReverseOff
	}
	return c.RowOn + strings.ReplaceAll(line, "\x1b[0m", "\x1b[0m"+c.RowOn) + "\x1b[0m"
}

// The escape codes of reverse video, on and off.
const ReverseOn, ReverseOff = "\x1b[7m", "\x1b[27m"

// Sharing is lineEnv's: a hub's sessions share the rows they render alike.
func (c *Common) Sharing(from any, width int) (*kit.RowCache, kit.RowsKey) {
	if c.Opt.Hub == nil {
		return nil, kit.RowsKey{}
	}
	rows, _ := c.Opt.Hub.Shared()
	return rows, kit.RowsKey{From: from, Width: width, Profile: c.R.ColorProfile(), Dark: c.R.HasDarkBackground(), Now: c.Now}
}

// Fitted is fit(s, w), measured once for a hub's sessions.
func (m *Common) Fitted(s string, w int) string {
	if m.Opt.Hub == nil {
		return kit.Fit(s, w)
	}
	_, lines := m.Opt.Hub.Shared()
	return lines.Get(kit.LineKey{S: s, W: w}, func() string { return kit.Fit(s, w) })
}

// ProjectRel takes the project's path off s: it is known, and the rest
// needs the room.
func (c *Common) ProjectRel(s string) string {
	p := c.Opt.Tree.Project
	if s == p {
		return "."
	}
	return strings.ReplaceAll(s, p+string(filepath.Separator), "")
}

// Box draws lines inside a border exactly w cells wide and h lines high, with
// a title and an optional hint set into the top edge.
func (c *Common) Box(title, hint string, lines []string, w, h int, focus bool) []string {
	if w < 4 || h < 2 {
		return nil
	}
	edge := c.St.Border
	if focus {
		edge = c.St.BorderFocus
	}
	inner := w - 2
	label := ""
	if title != "" {
		label = " " + title + " "
	}
	if hint != "" {
		hint = " " + hint + " "
	}
	if ansi.StringWidth(label)+ansi.StringWidth(hint)+2 > inner {
		hint = ""
	}
	label = kit.Fit(label, min(ansi.StringWidth(label), inner-1))
	fill := max(0, inner-1-ansi.StringWidth(label)-ansi.StringWidth(hint))
	out := make([]string, 0, h)
	out = append(out, edge.Render("┌─")+c.St.Title.Render(label)+edge.Render(strings.Repeat("─", fill))+c.St.Dim.Render(hint)+edge.Render("┐"))
	side := edge.Render("│")
	for i := 0; i < h-2; i++ {
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		out = append(out, side+c.Fitted(line, inner)+side)
	}
	out = append(out, edge.Render("└"+strings.Repeat("─", inner)+"┘"))
	return out
}

// Ink gives plain text the Text colour explicitly, after every reset, so
// nothing on screen is left to the terminal's default colour. Readers that
// take the screen apart line by line (tmux captures, screenshot tools) then
// see the colours the terminal shows.
func (c *Common) Ink(line string) string {
	if c.InkOn == "" {
		return line
	}
	return c.InkOn + strings.ReplaceAll(line, "\x1b[0m", "\x1b[0m"+c.InkOn) + "\x1b[0m"
}
