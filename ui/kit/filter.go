package kit

import (
	"strings"

	"github.com/charmbracelet/bubbles/textinput"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
)

// Filter is one pane's filter: the text typed after `/` and whether it
// is being typed now. Every pane keeps its own, so narrowing the events
// does not empty the plans table; the text applies until esc clears it.
type Filter struct {
	Input  textinput.Model
	Typing bool
}

func (f *Filter) FilterOf() *Filter { return f }

// Needle is the filter as rows are matched against it: lower case, trimmed.
func (f *Filter) Needle() string { return strings.ToLower(strings.TrimSpace(f.Input.Value())) }

// Active reports whether the filter narrows the pane's rows.
func (f *Filter) Active() bool { return f.Needle() != "" }

// AnyContains reports whether one of ss contains the needle (lower case).
func AnyContains(needle string, ss ...string) bool {
	if needle == "" {
		return true
	}
	for _, s := range ss {
		if ContainsFold(s, needle) {
			return true
		}
	}
	return false
}

// ContainsFold is strings.Contains on lower-cased s, without allocating
// for ASCII text, which every row of ten thousand mostly is.
func ContainsFold(s, needle string) bool {
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

// FilterTitle is a pane's box title, naming the filter while it applies.
func FilterTitle(name string, f *Filter) string {
	if !f.Active() {
		return name
	}
	return name + " · /" + termtext.Line(f.Input.Value())
}

// EmptyText says why a pane has no rows: nothing matches, or empty.
func EmptyText(f *Filter, empty string) string {
	if f.Active() {
		return "nothing matches /" + termtext.Line(f.Input.Value()) + " (esc clears)"
	}
	return empty
}
