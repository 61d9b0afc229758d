package ui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"
)

// Sessions of one hub showing the same rows at the same width and colour
// profile render them once between them; a session at another width or in
// other colours gets rows of its own; each shows what it would alone.
func TestRowsSharedBetweenSessions(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	hub := newHub(t, p)
	board := loadBoard(p.tree)
	open := func(w int, profile termenv.Profile, h *Hub) Model {
		opt := p.options()
		opt.Renderer.SetColorProfile(profile)
		opt.Hub = h
		m := New(opt)
		t.Cleanup(m.Close)
		m = step(m, tea.WindowSizeMsg{Width: w, Height: 30})
		m = step(m, board)
		_ = m.View()
		return m
	}
	a, b := open(120, termenv.ANSI256, hub), open(120, termenv.ANSI256, hub)
	if plansOf(&a).Shared() == nil || plansOf(&a).Shared() != plansOf(&b).Shared() {
		t.Fatal("two sessions alike render the plans' rows each")
	}
	narrow, plain := open(90, termenv.ANSI256, hub), open(120, termenv.Ascii, hub)
	if plansOf(&narrow).Shared() == plansOf(&a).Shared() || plansOf(&plain).Shared() == plansOf(&a).Shared() || plansOf(&narrow).Shared() == plansOf(&plain).Shared() {
		t.Fatal("sessions of another width or profile take rows rendered for the others")
	}
	for _, s := range []struct {
		m       Model
		w       int
		profile termenv.Profile
	}{{a, 120, termenv.ANSI256}, {b, 120, termenv.ANSI256}, {narrow, 90, termenv.ANSI256}, {plain, 120, termenv.Ascii}} {
		if got, want := s.m.View(), open(s.w, s.profile, nil).View(); got != want {
			t.Errorf("%d columns, profile %v: a served session shows\n%s\nalone it shows\n%s", s.w, s.profile, got, want)
		}
	}
}
