package backendtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// A peer review's worktree gets a backend of its own (never the
// reviewer's worker backend): set up before the reviewer runs, its ports in
// the reviewer's environment, torn down and its ports given back after.
func TestPeerReviewGetsItsOwnBackend(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t)
	log := filepath.Join(t.TempDir(), "backend.log")
	os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("integration: dev\nworktree:\n  ports: 2\n  env:\n    APP_DB: \"db_{agent_id}\"\n"+
		"  setup: [sh, -c, \"echo setup {agent_id} {slug} $APP_DB >> "+log+"\"]\n"+
		"  teardown: [sh, -c, \"echo teardown {agent_id} {slug} >> "+log+"\"]\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("var/\n.plans/\n"), 0o644)
	testkit.Git(t, dir, "add", ".gitignore")
	testkit.Git(t, dir, "commit", "-q", "-m", "base")
	testkit.Git(t, dir, "branch", "dev")
	wt := filepath.Join(t.TempDir(), "wt")
	testkit.Git(t, dir, "worktree", "add", "-q", "-b", "feature/x", wt, "dev")
	os.WriteFile(filepath.Join(wt, "x.txt"), []byte("x\n"), 0o644)
	testkit.Git(t, wt, "add", "x.txt")
	testkit.Git(t, wt, "commit", "-q", "-m", "x")
	testkit.Git(t, dir, "worktree", "remove", "--force", wt)
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/x.md"}, 0)

	rec := filepath.Join(t.TempDir(), "rec.json")
	argv, _ := json.Marshal([]string{fwtest.FakeAgent(t), "-verdict", "ACCEPT", "-record", rec})
	grant, _ := json.Marshal([]string{filepath.Dir(rec)})
	os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte("endpoints:\n  - name: mid\n    tier: mid\n    model: fake-1\n    command: "+string(argv)+"\n    sandbox_write: "+string(grant)+"\n"), 0o644)

	r := fwtest.Run(t, dir, "review", "x", "--peer")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "peer review by review-mid: ACCEPT") {
		t.Fatalf("peer review: %v", r)
	}
	data, _ := os.ReadFile(log)
	if want := "setup review-review-mid x db_review-review-mid\nteardown review-review-mid x\n"; string(data) != want {
		t.Errorf("backend log %q, want %q", data, want)
	}
	var got struct{ Env map[string]string }
	raw, _ := os.ReadFile(rec)
	json.Unmarshal(raw, &got)
	if got.Env["FLEET_PORT"] == "" || got.Env["FLEET_PORT_1"] == "" || got.Env["FLEET_PORT"] == got.Env["FLEET_PORT_1"] {
		t.Errorf("the reviewer's ports: %v", got.Env)
	}
	if r := fwtest.Run(t, dir, "worktree", "list"); strings.Contains(r.Stdout, "review-") {
		t.Errorf("the review's ports are kept:\n%s", r.Stdout)
	}
}
