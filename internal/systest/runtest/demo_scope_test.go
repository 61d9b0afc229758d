package runtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// The demo's plan-first share-links, approved in the inbox and built by
// its agent (the stand-in): the commit touches only what the approved
// plan's Files in scope allow, and the driver's scope scanner says so.
func TestDemoAgentBuildsWithinTheApprovedScope(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fwtest.Want(t, fwtest.Run(t, root, "demo", "--keep", "--root", root), fwtest.ExitOK)
	project := filepath.Join(root, "jotter")
	yaml, err := os.ReadFile(filepath.Join(project, "endpoints.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fast := strings.Replace(string(yaml), `"demo-agent"`, `"demo-agent", "--pace", "5ms"`, 1)
	if err := os.WriteFile(filepath.Join(project, "endpoints.yaml"), []byte(fast), 0o644); err != nil {
		t.Fatal(err)
	}
	fwtest.Want(t, fwtest.Run(t, project, "approve", "--agent-id", "alice", "share-links"), fwtest.ExitOK)
	r := fwtest.Run(t, project, "work-once", "--run", "--ensure-worktree", "--endpoint", "cloud-reasoner", "--agent-id", "reasoner-2")
	if r.Code != 0 || !strings.Contains(r.Stdout, filepath.Join("review-needed", "share-links.md")) {
		t.Fatalf("reasoner-2's build of share-links: %v", r)
	}
	wt := filepath.Join(project, "var", "worktrees", "reasoner-2")
	out, err := exec.Command("git", "-C", wt, "log", "-1", "--format=%an", "--name-only").Output()
	if err != nil || strings.Fields(string(out))[0] != "reasoner-2" {
		t.Fatalf("no commit by reasoner-2: %s %v", out, err)
	}
	if files := strings.Fields(string(out))[1:]; strings.Join(files, " ") != "web/share.html" {
		t.Errorf("the build touched %v; the approved scope is share.go, share_test.go, main.go, web/share.html", files)
	}
	data, err := os.ReadFile(filepath.Join(project, "var", "fleet", "workers", "reasoner-2.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Scope      string   `json:"scope"`
		Violations []string `json:"violations"`
	}
	if err := json.Unmarshal(data, &st); err != nil || len(st.Violations) > 0 || st.Scope == "no scope check" {
		t.Errorf("the scope scanner's word: %+v (%v)", st, err)
	}
}
