package ui

import (
	"testing"
)

// The top overlay takes the keys and draws the body; closing it shows
// the one below, and the key order lives in key() alone: here help is
// open over the reader, esc on help closes help only.
func TestOverlayStackTopFirst(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 120, 32)
	h.press("enter")
	if !h.m.reading() {
		t.Fatal("enter did not open the reader")
	}
	h.m.stack.push(&helpScreen{})
	if _, ok := h.m.stack.top().(*helpScreen); !ok {
		t.Fatal("help is not on top")
	}
	h.press("esc")
	if h.m.helpShown() || !h.m.reading() {
		t.Fatalf("esc on help: help %v, reader %v; want only help closed", h.m.helpShown(), h.m.reading())
	}
	h.press("esc")
	if len(h.m.stack) != 0 {
		t.Fatalf("esc on the reader left %d overlays", len(h.m.stack))
	}
}
