package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// DefaultKeyMap returns the bindings with their help text, the panes'
// number keys among them.
func DefaultKeyMap() uictx.KeyMap {
	k := uictx.DefaultKeys()
	k.Panes = paneKeys()
	return k
}

// paneKeys are the number keys, one per pane in the pane list.
func paneKeys() []key.Binding {
	ks := make([]key.Binding, len(paneSpecs))
	for i, p := range paneSpecs {
		n := kit.Itoa(i + 1)
		ks[i] = key.NewBinding(key.WithKeys(n), key.WithHelp(n, strings.ToLower(p.name)))
	}
	return ks
}
