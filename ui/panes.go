package ui

import "strings"

// cell is s fitted to w and a space, or nothing for a hidden column (w 0).
func cell(s string, w int) string {
	if w == 0 {
		return ""
	}
	return fit(s, w) + " "
}

func gutter(selected bool) string {
	if selected {
		return "▸ "
	}
	return "  "
}

// finish highlights a selected row across the whole table width.
func (m *Model) finish(line string, selected bool) string {
	if !selected {
		return line
	}
	return m.highlight(fit(line, m.tableWidth()))
}

// highlight marks a selected line without hiding the colours inside it:
// a background renewed after every reset inside; with no colour at all
// (NO_COLOR, the Ascii profile drops every style) reverse video, written
// directly, so the selection is more than the ▸ in its gutter.
func (m *Model) highlight(line string) string {
	if m.plain || m.rowOn == "" {
		return reverseOn + line + reverseOff
	}
	return m.rowOn + strings.ReplaceAll(line, "\x1b[0m", "\x1b[0m"+m.rowOn) + "\x1b[0m"
}

// The escape codes of reverse video, on and off.
const reverseOn, reverseOff = "\x1b[7m", "\x1b[27m"
