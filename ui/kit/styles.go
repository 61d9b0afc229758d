package kit

import (
	"strconv"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles holds every style, built from one renderer so an SSH session gets
// its own colour profile. Colour is always redundant: every state also has a
// symbol or a word.
type Styles struct {
	Bar, Tab, TabActive      lipgloss.Style
	Border, BorderFocus      lipgloss.Style
	Title, Header, Dim, Bold lipgloss.Style
	Selected                 lipgloss.Style
	// SelectedRow is the selected row of a table: a background under
	// the row's own colours.
	SelectedRow               lipgloss.Style
	Good, Warn, Bad, Info     lipgloss.Style
	StatusOK, StatusErr, Help lipgloss.Style
	Dialog                    lipgloss.Style
	// Text is the colour of plain text, given explicitly (see ink).
	Text lipgloss.Style
}

// NewStyles builds the styles for r.
func NewStyles(r *lipgloss.Renderer) Styles {
	c := func(light, dark string) lipgloss.TerminalColor { return colorFor(r, light, dark) }
	accent := c("#5A56E0", "#7D79F6")
	subtle := c("#A0A0A0", "#5C5C5C")
	s := r.NewStyle
	return Styles{
		Bar:         s().Bold(true),
		Tab:         s().Foreground(c("#707070", "#A0A0A0")),
		TabActive:   s().Bold(true).Foreground(accent),
		Border:      s().Foreground(subtle),
		BorderFocus: s().Foreground(accent),
		Title:       s().Bold(true),
		Header:      s().Bold(true).Foreground(c("#505050", "#B0B0B0")),
		Dim:         s().Foreground(c("#8A8A8A", "#6E6E6E")),
		Bold:        s().Bold(true),
		Selected:    s().Bold(true).Foreground(accent),
		SelectedRow: s().Bold(true).Background(c("#E2E1F8", "#2D2B55")),
		Good:        s().Foreground(c("#1A7F37", "#56D364")),
		Warn:        s().Foreground(c("#9A6700", "#E3B341")),
		Bad:         s().Foreground(c("#CF222E", "#F85149")),
		Info:        s().Foreground(accent),
		StatusOK:    s().Foreground(c("#1A7F37", "#56D364")),
		StatusErr:   s().Foreground(c("#CF222E", "#F85149")).Bold(true),
		Help:        s().Foreground(c("#707070", "#8A8A8A")),
		Dialog:      s().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
		Text:        s().Foreground(c("#262626", "#D7D7D7")),
	}
}

// HelpStyles are bubbles' help colours, made by r.
func HelpStyles(r *lipgloss.Renderer) help.Styles {
	c := func(light, dark string) lipgloss.Style { return r.NewStyle().Foreground(colorFor(r, light, dark)) }
	key, desc, sep := c("#909090", "#626262"), c("#B2B2B2", "#4A4A4A"), c("#DDDADA", "#3C3C3C")
	return help.Styles{ShortKey: key, ShortDesc: desc, ShortSeparator: sep, Ellipsis: sep, FullKey: key, FullDesc: desc, FullSeparator: sep}
}

// colorFor is the colour r shows for light or dark backgrounds. On a
// 256-colour terminal it is converted once, here: lipgloss converts a hex
// colour at every render (most of a render's cost), and a served frame
// renders hundreds. The number is the one lipgloss would find (always 16
// or more), so the escape codes are the same.
func colorFor(r *lipgloss.Renderer, light, dark string) lipgloss.TerminalColor {
	adaptive := lipgloss.AdaptiveColor{Light: light, Dark: dark}
	if r.ColorProfile() != termenv.ANSI256 {
		return adaptive
	}
	hex := light
	if r.HasDarkBackground() {
		hex = dark
	}
	if n, ok := r.ColorProfile().Color(hex).(termenv.ANSI256Color); ok && n >= 16 {
		return lipgloss.Color(strconv.Itoa(int(n)))
	}
	return adaptive
}
