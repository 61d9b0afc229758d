package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/model"
)

// R on a ready plan whose claimer died before moving it clears its stale
// ready-path lease through the lease files' backend, as planfs's recover
// does: no lease is taken, and the plan is claimable again.
func TestRecoverStaleReadyLease(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	stale := `{"plan":"features/ci-image.md","agent_id":"gone","claimed_at":1,"expires_at":2,"host":"elsewhere","token":"old"}`
	if err := os.WriteFile(filepath.Join(p.tree.Plans, ".leases", model.LeaseFileName("features/ci-image.md")), []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 120, 32)
	h.selectLease("features/ci-image.md")
	h.press("R")
	if v := h.view(); !strings.Contains(v, "The stale lease is dropped, so agents can pick") {
		t.Fatalf("recover dialog:\n%s", v)
	}
	h.press("enter")
	if l := p.leaseOf("features/ci-image.md"); l != nil {
		t.Fatalf("the stale lease stayed: %+v", l)
	}
	if f := h.footer(); !strings.Contains(f, "✓ recovered ci-image: its stale lease is gone") {
		t.Errorf("status line %q", f)
	}
	if e := p.lastEvent(t); e.Event != "recover" || e.AgentID != "op" {
		t.Errorf("last event %+v, want op's recover", e)
	}
}
