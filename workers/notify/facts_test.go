package notify

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// gitAt commits on branch in dir with the committer's clock at when.
func gitAt(t *testing.T, dir string, when time.Time, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "-C", dir}, args...)...)
	stamp := when.Format(time.RFC3339)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_COMMITTER_DATE="+stamp, "GIT_AUTHOR_DATE="+stamp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// Gather reads a real project as the cockpit would and finds the whole
// fleet's notices: a plan in review, a run paused at its budget, a
// landing the lander refused, and a claimed plan with no commit for
// stuck_after (its sibling, with a fresh commit on its branch, is not).
func TestGatherFindsTheFleetsNotices(t *testing.T) {
	dir := t.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"review-needed/done.md", "in-progress/slow.md", "in-progress/busy.md"} {
		fwtest.WritePlan(t, dir, fwtest.Plan{Rel: rel}, time.Minute)
	}
	testkit.Git(t, dir, "init", "-q", "-b", "main")
	now := time.Now()
	gitAt(t, dir, now.Add(-5*time.Hour), "commit", "-q", "--allow-empty", "-m", "init")
	gitAt(t, dir, now.Add(-4*time.Hour), "branch", "feature/slow")
	testkit.Git(t, dir, "checkout", "-q", "-b", "feature/busy")
	gitAt(t, dir, now.Add(-time.Minute), "commit", "-q", "--allow-empty", "-m", "progress")
	for _, p := range []string{"slow", "busy"} {
		fwtest.PutLease(t, dir, "in-progress/"+p+".md", fwtest.AnchorLease("in-progress/"+p+".md", "w-"+p, 3*3600, 4*3600))
	}
	st := look.State{PID: os.Getpid(), AgentID: "w-busy", Plan: "in-progress/busy.md", State: look.StateRunning, Host: hostnameOf(t),
		HeartbeatEvery: 60, Started: look.Stamp{Time: now.Add(-time.Hour)}, LastHeartbeat: look.Stamp{Time: now},
		Paused: "budget reached: the run's budget ($5)", PausedAt: look.Stamp{Time: now.Add(-time.Minute)}}
	data, _ := json.Marshal(st)
	os.MkdirAll(filepath.Join(dir, look.StateDir), 0o755)
	os.WriteFile(look.StatePath(dir, "w-busy"), data, 0o644)
	// A conversation waiting on a person's answer.
	st.AgentID, st.Plan, st.Paused, st.PausedAt = "w-talk", "in-progress/talk.md", "", look.Stamp{}
	st.Asking = &claims.AskRecord{ID: "ask-1", Question: "run `make deploy`?\x1b[2J", Since: float64(now.Unix())}
	data, _ = json.Marshal(st)
	os.WriteFile(look.StatePath(dir, "w-talk"), data, 0o644)
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tree.LogEvent(planfs.Event{Event: landing.EventLandRefused, Slug: "done", To: "0123456789", Reason: "not ready: done is not approved"})

	r, err := Gather(tree, nil, 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range model.Conditions(Facts(r)) {
		got = append(got, string(n.Kind)+" "+n.Text)
	}
	slices.Sort(got)
	want := []string{
		"asking w-talk waits for input on in-progress/talk.md: run `make deploy`??[2J; fleetwatch answer w-talk …",
		"budget w-busy is paused on in-progress/busy.md: budget reached: the run's budget ($5)",
		"landing landing done @ 0123456 did not land: not ready: done is not approved",
		"review done waits for review: Plan: done",
		"stuck in-progress/slow.md: no commit from w-slow for 3h0m",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("notices\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func hostnameOf(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
