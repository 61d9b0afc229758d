package containtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

func hostile(t *testing.T) string { return fwtest.Program(t, "./testdata/hostile") }

// attacks are the hostile agent's attempts; each must be denied.
var attacks = []string{
	"write-settings", "write-endpoints", "write-plans", "write-checks", "write-git-config",
	"write-git-hook", "write-other-worktree", "delete-object", "move-integration-ref",
	"approve", "queue-land", "complete-another-plan", "signal-driver",
}

func TestHostileAgentIsContained(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"}, fwtest.Plan{Rel: "features/waiting.md"})
	settings := "integration: dev\n"
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	fwtest.WithExecutor(t, dir, hostile(t), fwtest.Exe(t))
	endpoints := fwtest.ReadRel(t, dir, "../endpoints.yaml")
	victim := filepath.Join(dir, "var", "worktrees", "victim")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	gitConfig := fwtest.ReadRel(t, dir, "../.git/config")

	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--slug", "x")
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	if r.Code != 0 {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
	for _, a := range attacks {
		if !strings.Contains(string(log), "attack "+a+": denied") {
			t.Errorf("attack %s was not denied; log:\n%s", a, log)
		}
	}
	for _, want := range []string{
		"attack approve: denied", "a person's verb",
		"attack complete-another-plan: denied", "an agent acts only on its own plan",
		"attack write-settings: denied (open " + filepath.Join(dir, "fleetwatch.yaml") + ": permission denied)",
		"honest work handed in", "agents are contained (Landlock ABI",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}

	// Nothing the gate reads changed.
	if got := fwtest.ReadRel(t, dir, "../fleetwatch.yaml"); got != settings {
		t.Errorf("fleetwatch.yaml changed: %q", got)
	}
	if got := fwtest.ReadRel(t, dir, "../endpoints.yaml"); got != endpoints {
		t.Errorf("endpoints.yaml changed: %q", got)
	}
	if got := fwtest.ReadRel(t, dir, "../.git/config"); got != gitConfig {
		t.Errorf(".git/config changed: %q", got)
	}
	for _, p := range []string{".plans/features/planted.md", "var/fleet/checks/forged.json", ".git/hooks/post-checkout", "var/worktrees/victim/planted.txt"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("the agent planted %s", p)
		}
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--no-progress").CombinedOutput(); err != nil {
		t.Errorf("git fsck after the agent: %v\n%s", err, out)
	}
	if dev, main := fwtest.GitOut(t, dir, "rev-parse", "refs/heads/dev"), fwtest.GitOut(t, dir, "rev-parse", "HEAD"); dev != main {
		t.Errorf("the integration branch moved: dev %s, the checkout %s", dev, main)
	}

	// The honest work is on the plan's branch, and the plan waits for review.
	if msg := fwtest.GitOut(t, dir, "log", "-1", "--format=%s", "refs/heads/feature/x"); msg != "honest work" {
		t.Errorf("feature/x's tip is %q, want the agent's commit", msg)
	}
	if !fwtest.Exists(dir, "review-needed/x.md") || !fwtest.Exists(dir, "features/waiting.md") {
		t.Errorf("plans after the run: %v", fwtest.Contents(t, dir))
	}
	var contained bool
	for _, e := range fwtest.EventsOf(t, dir) {
		contained = contained || (e["event"] == "contained" && e["slug"] == "x")
	}
	if !contained {
		t.Errorf("no contained event for x: %v", fwtest.EventsOf(t, dir))
	}
	if st := fwtest.StateOf(t, dir, "w1"); !strings.HasPrefix(st.Contained, "agents are contained") {
		t.Errorf("state file: contained %q", st.Contained)
	}
}

// Without the sandbox (`sandbox: off`, or a host without Landlock) the gate
// still refuses what an agent's process asks of it, however it cleaned its
// environment, and every face says the agents are not contained.
func TestGateRefusesAnUncontainedAgent(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"}, fwtest.Plan{Rel: "features/waiting.md"})
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("sandbox: off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fwtest.WithExecutor(t, dir, hostile(t), fwtest.Exe(t), "gate")
	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--slug", "x")
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	if r.Code != 0 {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
	for _, want := range []string{
		"attack approve: denied", "attack queue-land: denied", "attack complete-another-plan: denied",
		"agents are not contained (sandbox: off)", "honest work handed in",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if l := fwtest.Run(t, dir, "work-once", "--list"); !strings.Contains(l.Stderr, "agents are not contained") {
		t.Errorf("--list does not say so: %v", l)
	}
	if c := fwtest.Run(t, dir, "check"); !strings.Contains(c.Stderr, "agents are not contained") {
		t.Errorf("check does not say so: %v", c)
	}
	if msg := fwtest.GitOut(t, dir, "log", "-1", "--format=%s", "refs/heads/feature/x"); msg != "honest work" {
		t.Errorf("feature/x's tip is %q, want the agent's commit", msg)
	}
}
