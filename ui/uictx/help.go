package uictx

import (
	"slices"

	"github.com/charmbracelet/bubbles/key"
)

// Helper is a pane that says what it answers to, for `?` and for a
// viewer's session: the root asks each pane rather than keeping a table
// of every pane's keys.
type Helper interface {
	Help(k *KeyMap) PaneHelp
}

// PaneHelp is what a pane says of itself: its keys as `?` lists them (its
// own struct in the KeyMap, whole), its legends, and its keys that change
// something, which a viewer's session turns off.
type PaneHelp struct {
	Keys    []*key.Binding
	Legends []Legend
	Acts    []Act
}

// Legend is a titled list of symbols or words, each with what it means.
type Legend struct {
	Title string
	Rows  [][2]string
}

// Act is a key that changes something, and the verb a refusal names.
type Act struct {
	Key  *key.Binding
	Verb string
}

// Quiet is a pane some of whose keys cannot apply in this project at all
// (the forge's, in a project without one): `?` leaves them out rather
// than grey them, so a project without the feature sees the pane as it was.
type Quiet interface {
	Quiet(k *KeyMap) []*key.Binding
}

// Listed is bs as `?` lists them for the live pane p: without the keys p
// keeps quiet.
func Listed(p Pane, k *KeyMap, bs []*key.Binding) []*key.Binding {
	q, ok := p.(Quiet)
	if !ok {
		return bs
	}
	quiet := q.Quiet(k)
	if len(quiet) == 0 {
		return bs
	}
	out := make([]*key.Binding, 0, len(bs))
	for _, b := range bs {
		if !slices.Contains(quiet, b) {
			out = append(out, b)
		}
	}
	return out
}
