package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// When endpoints.yaml cannot be read, the form's warning began with the
// file's absolute path, so the box cut it before the reason: at 80×24
// the operator read "⚠ /home/…/endpoints.yaml:1…" and never what was
// wrong.
func TestSpawnFormSaysWhatIsWrongWithTheRegistry(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	if err := os.WriteFile(filepath.Join(p.dir, "endpoints.yaml"), []byte("endpoints:\n  - name: [broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := p.options()
	opt.Self = "/usr/local/bin/fleetwatch" // never run: the form is only drawn
	h := newHarnessWith(t, p, opt, 80, 24)
	h.press("4", "s")
	v := h.view() // fails on the temp path
	if !strings.Contains(strings.Join(strings.Fields(v), " "), "endpoints.yaml:1: did not find expected") {
		t.Errorf("the form does not say what is wrong with endpoints.yaml:\n%s", v)
	}
}

// The demo's hint, "4 then s", spawned `run as ‹ mid ›`, a tier, on every
// project; on one whose endpoints name their agents the worker exited 2
// ("no executor"). With endpoints, the form offers them, first first, and
// the worker runs with --endpoint.
func TestSpawnFormOffersTheProjectsEndpoints(t *testing.T) {
	t.Parallel()
	p, h := spawnHarness(t, 120, 32)
	reg := "endpoints:\n  - name: claude\n    tier: frontier\n    agent: claude\n    model: opus\n  - name: laptop-swarm\n    tier: small\n    model: qwen3-8b\n"
	if err := os.WriteFile(filepath.Join(p.dir, "endpoints.yaml"), []byte(reg), 0o644); err != nil {
		t.Fatal(err)
	}
	h.press("4", "s")
	f := h.m.formShown()
	if f == nil {
		t.Fatal("s opened no form")
	}
	v := h.view()
	for _, want := range []string{"▸ run as     ‹ claude ›", "claude laptop-swarm", "endpoint claude: tier frontier, model opus"} {
		if !strings.Contains(v, want) {
			t.Errorf("form lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "reasoner") || f.agent.Value() != "ui-claude-1" {
		t.Errorf("agent %q; tiers offered beside the endpoints:\n%s", f.agent.Value(), v)
	}
	h.press("right")
	if v := h.view(); !strings.Contains(v, "‹ laptop-swarm ›") || !strings.Contains(v, "endpoint laptop-swarm: tier small, model qwen3-8b") {
		t.Errorf("the second endpoint:\n%s", v)
	}
	h.press("left", "enter")
	if h.m.formShown() != nil {
		t.Fatalf("the form stayed open:\n%s", h.view())
	}
	want := proc.WorkArgs(p.dir, proc.Spec{Agent: "ui-claude-1", Endpoint: "claude", Run: true, Worktree: true})
	if got := p.fakeArgv(t, "ui-claude-1"); !slices.Equal(got, want) {
		t.Errorf("argv %q, want %q", got, want)
	}
}
