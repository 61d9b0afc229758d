package workers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	endpoints "github.com/fleetwatch/fleetwatch/registry"
)

// Stopped between two plans of --max-plans: exit 2 needs its one line on
// stderr like every other exit 2.
func TestReviewRunStoppedBeforeClaimingSaysWhy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, ".plans", "features", "a.md")
	if err := os.WriteFile(plan, []byte("# A\n\n- **Priority:** P2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("SIGTERM"))
	var stdout, stderr bytes.Buffer
	w := &WorkOnce{Tree: tree, Worker: model.Worker{AgentID: "w1", Tier: model.Mid}, MaxPlans: 3, TTL: 60, Stdout: &stdout,
		Say: func(format string, args ...any) { fmt.Fprintf(&stderr, format+"\n", args...) }}
	side, code := w.side(ctx)
	if code != going {
		t.Fatalf("scan: %d, %q", code, stderr.String())
	}
	code, note := w.each(ctx, side, nil, 0)
	if code != StatusError || !strings.Contains(note, "SIGTERM") || !strings.Contains(stderr.String(), "SIGTERM") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("code %d note %q stderr %q", code, note, stderr.String())
	}
	if _, err := os.Stat(plan); err != nil {
		t.Error("nothing should be claimed once stopped")
	}
}

// A setup that refuses nothing by name (no worktree backend) and a plan
// too big for the endpoint: the refusal is the size's, never a nil call.
func TestSetupRefusalWithoutABackend(t *testing.T) {
	dir := t.TempDir()
	refuse := SetupRefusal(dir, "w1", true, endpoints.Endpoint{Name: "small", MaxContext: 10})
	if refuse == nil {
		t.Fatal("no refusal for a max_context")
	}
	if why := refuse(&model.Plan{Size: 400}); !strings.Contains(why, "over small's max_context of 10") {
		t.Errorf("%q", why)
	}
	if SetupRefusal(dir, "w1", true, endpoints.Endpoint{}) != nil {
		t.Error("a refusal with nothing to refuse")
	}
}
