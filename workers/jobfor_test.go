package workers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	endpoints "github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// scopeFor takes the approved plan's scope over the plan's own, keeps the
// plan's allowed generated files, gives a plan turn no scope and an agent
// without a worktree nothing to scan; the endpoint's on_scope_violation
// wins over fleetwatch.yaml's.
func TestScopeForJob(t *testing.T) {
	dir := t.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	plan := "# X\n- **Allowed generated files:** gen/**\n\n## Files in scope\n- plan/\n"
	os.WriteFile(filepath.Join(dir, ".plans", "in-progress", "x.md"), []byte(plan), 0o644)
	approved := filepath.Join(dir, "approved.md")
	os.WriteFile(approved, []byte("# How\n\n## Files in scope\n- `src/*.go`\n- docs/\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("on_scope_violation: stop\n"), 0o644)
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := &WorkOnce{Tree: tree, Worker: model.Worker{AgentID: "w1"}}
	job := func(mode, approvedPlan, wt string) Job {
		t.Helper()
		j := Job{Rel: "in-progress/x.md", Mode: mode, ApprovedPlan: approvedPlan, Worktree: wt}
		if err := w.scopeFor(&j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	j := job(proc.ModeBuild, approved, "/wt")
	if j.Scope == nil || !slices.Equal(j.Scope.Patterns, []string{"src/*.go", "docs/"}) || !slices.Equal(j.Scope.Allowed, []string{"gen/**"}) || !j.StopOnViolation {
		t.Errorf("approved build: %+v %+v", j, j.Scope)
	}
	if j := job(proc.ModeBuild, "", "/wt"); j.Scope == nil || !slices.Equal(j.Scope.Patterns, []string{"plan/"}) {
		t.Errorf("build: %+v", j.Scope)
	}
	if j := job(proc.ModePlan, "", "/wt"); j.Scope != nil || !j.StopOnViolation {
		t.Errorf("plan turn: %+v", j)
	}
	if j := job(proc.ModeBuild, "", ""); j.Scope != nil || j.StopOnViolation {
		t.Errorf("no worktree: %+v", j)
	}
	w.Endpoint = endpoints.Endpoint{OnScopeViolation: "warn"}
	if j := job(proc.ModeBuild, "", "/wt"); j.StopOnViolation {
		t.Errorf("the endpoint warns: %+v", j)
	}
	j = Job{Rel: "in-progress/x.md", ApprovedPlan: filepath.Join(dir, "gone.md"), Worktree: "/wt"}
	if err := w.scopeFor(&j); err == nil || !strings.Contains(err.Error(), "approved plan "+filepath.Join(dir, "gone.md")+": no such file") {
		t.Errorf("missing approved plan: %v", err)
	}
}
