package realopencodetest

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"fleetwatch/internal/modelapi"
	"fleetwatch/internal/testkit/fwtest"
	"fleetwatch/workers"
)

const opencodePkg = "opencode-ai@1.18.33"

// The real opencode, contained, as root and as a user, with the endpoint's
// base_url and without one (metered by default: the proxy stands in front
// of the operator's own ANTHROPIC_BASE_URL, which opencode reads with the
// API's version in it): its bash tool commits, the driver brings the
// commit in, and the metering proxy counts exactly what the API sent.
func TestOpencodeBuildsContained(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	bin := realAgent(t, "opencode", opencodePkg)
	for _, u := range fwtest.Users(t) {
		for _, byDefault := range []bool{false, true} {
			name := u.Label() + "/base_url"
			if byDefault {
				name = u.Label() + "/metered_by_default"
			}
			t.Run(name, func(t *testing.T) { opencodeBuilds(t, bin, u, byDefault) })
		}
	}
}

func opencodeBuilds(t *testing.T, bin string, u *fwtest.User, byDefault bool) {
	api := startAPI(t, commitStep("opencode", "hello.txt"), modelapi.Step{Text: "## Result\ncommitted hello.txt"})
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/hello.md"})
	endpoints := "endpoints:\n  - name: oc\n    tier: mid\n    model: anthropic/claude-sonnet-4-5\n    agent: opencode\n"
	env := homeFor(t, "opencode", bin, "ANTHROPIC_API_KEY=sk-ant-test")
	if byDefault {
		env = append(env, "ANTHROPIC_BASE_URL="+api.URL+"/v1")
	} else {
		endpoints += "    base_url: " + api.URL + "/v1\n"
	}
	writeFile(t, dir, "endpoints.yaml", endpoints)
	r := fwtest.RunAs(t, u, dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "oc", "--agent-id", "oc1", "--slug", "hello")
	log, _ := os.ReadFile(workers.LogPath(dir, "oc1"))
	if r.Code != 0 {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
	for _, want := range []string{
		"agents are contained (Landlock ABI", "network only through the driver",
		"agent exited 0; review-needed/hello.md waits for review",
		"spent " + strconv.FormatInt(api.Usage().Tokens(), 10) + " tokens", "(metered)",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if msg := fwtest.GitOut(t, dir, "log", "-1", "--format=%s", "refs/heads/feature/hello"); msg != "opencode: hello" {
		t.Errorf("feature/hello's tip is %q, want opencode's commit; log:\n%s", msg, log)
	}
	if got := fwtest.GitOut(t, dir, "show", "refs/heads/feature/hello:hello.txt"); got != "hello from opencode" {
		t.Errorf("hello.txt on the branch: %q", got)
	}
	for _, c := range api.Calls() {
		if c.Auth != "sk-ant-test" {
			t.Errorf("a call to %s carried %q, not the operator's key", c.Path, c.Auth)
		}
	}
}
