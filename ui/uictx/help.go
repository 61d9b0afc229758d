package uictx

import "github.com/charmbracelet/bubbles/key"

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
