package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/ui/kit"
)

// Box draws lines inside a border exactly w cells wide and h lines high, with
// a title and an optional hint set into the top edge.
func (c *common) Box(title, hint string, lines []string, w, h int, focus bool) []string {
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

// beside joins two blocks of lines side by side; both must have the same height.
func beside(left, right []string) []string {
	out := make([]string, max(len(left), len(right)))
	for i := range out {
		var l, r string
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out[i] = l + r
	}
	return out
}
