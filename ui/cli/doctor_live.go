package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// liveTimeout bounds one endpoint's live check: a real CLI against a
// scripted API on loopback takes seconds.
const liveTimeout = 2 * time.Minute

// liveFile is what the scripted model has the agent write and commit.
const liveFile = "fleetwatch-live.txt"

// liveFindings runs each preset endpoint of the registry at regPath (only
// the one named only, when only is set) through liveCheck.
func liveFindings(regPath, only string) []finding {
	reg, err := registry.Load(regPath)
	if err != nil {
		return []finding{{fFail, "live: " + err.Error()}}
	}
	var out []finding
	for _, ep := range reg.Endpoints {
		if only != "" && ep.Name != only {
			continue
		}
		if ep.Agent == "" {
			out = append(out, finding{fNone, "live " + ep.Name + ": runs its own command:, which has no scripted API to run against"})
			continue
		}
		out = append(out, liveCheck(ep))
	}
	if only != "" && len(out) == 0 {
		out = append(out, finding{fFail, fmt.Sprintf("live: %s has no endpoint %q", regPath, only)})
	}
	return out
}

// liveCheck runs ep's real CLI, contained, under a real driver in a
// throwaway repository against the built-in scripted API: it must start,
// run its shell tool to edit and commit, be metered exactly, and exit 0.
// No token is spent and the operator's project is not touched.
func liveCheck(ep registry.Endpoint) finding {
	who := "live " + ep.Name + " (" + ep.Agent + ")"
	api, err := modelapi.Start(modelapi.Script{Steps: []modelapi.Step{
		{Shell: "echo 'fleetwatch doctor --live' > " + liveFile + " && git add " + liveFile +
			" && git -c user.name=fleetwatch-live -c user.email=live@fleetwatch.invalid commit -qm 'doctor --live'"},
		{Text: "## Result\ncommitted " + liveFile},
	}})
	if err != nil {
		return finding{fFail, who + ": the scripted API: " + err.Error()}
	}
	defer api.Close()
	dir, err := os.MkdirTemp("", "fleetwatch-live-")
	if err != nil {
		return finding{fFail, who + ": " + err.Error()}
	}
	start := time.Now()
	log, err := liveRun(dir, ep, api)
	took := time.Since(start).Round(100 * time.Millisecond)
	if err != nil {
		return finding{fFail, fmt.Sprintf("%s: %v after %s (kept %s)%s", who, err, took, dir, logTail(log))}
	}
	os.RemoveAll(dir)
	return finding{fOK, fmt.Sprintf("%s: started, edited and committed contained, metered %d tokens as the API sent, exited 0 in %s", who, api.Usage().Tokens(), took)}
}

// liveRun makes the throwaway project in dir and runs one build in it;
// it returns the driver's log.
func liveRun(dir string, ep registry.Endpoint, api *modelapi.Server) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveTimeout)
	defer cancel()
	run := func(name string, args ...string) error {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env = dir, liveEnv(ep)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s %s: %v: %s", filepath.Base(name), strings.Join(args, " "), err, lastLine(string(out)))
		}
		return nil
	}
	if err := run(self, "scaffold", dir); err != nil {
		return "", err
	}
	plan := "# Plan: live\n\n## Goal\nWrite " + liveFile + ".\n\n## Done when\n- " + liveFile + " is committed\n"
	endpoints := fmt.Sprintf("endpoints:\n  - name: live\n    tier: mid\n    model: %s\n    agent: %s\n    base_url: %s\n",
		strconv.Quote(ep.Model), ep.Agent, strconv.Quote(liveBaseURL(ep, api.URL)))
	for rel, text := range map[string]string{".plans/features/live.md": plan, "endpoints.yaml": endpoints} {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=fleetwatch-live", "-c", "user.email=live@fleetwatch.invalid", "commit", "-qm", "live"}} {
		if err := run("git", args...); err != nil {
			return "", err
		}
	}
	err = run(self, "work-once", "--run", "--ensure-worktree", "--endpoint", "live", "--agent-id", "live", "--slug", "live")
	logText, _ := os.ReadFile(look.LogPath(dir, "live"))
	if err != nil {
		return string(logText), err
	}
	return string(logText), liveVerdict(ctx, dir, string(logText), api)
}

// liveVerdict checks what the run left: the commit on its branch and a
// metered count equal to what the scripted API sent.
func liveVerdict(ctx context.Context, dir, log string, api *modelapi.Server) error {
	r, err := gitenv.Run(ctx, gitenv.Call{Dir: dir, Args: []string{"show", "refs/heads/feature/live:" + liveFile}, Timeout: 10 * time.Second})
	if err != nil || !strings.Contains(string(r.Out), "doctor --live") {
		return fmt.Errorf("the agent's commit of %s did not reach feature/live", liveFile)
	}
	want := fmt.Sprintf("spent %d tokens", api.Usage().Tokens())
	if !strings.Contains(log, want) || !strings.Contains(log, "(metered)") {
		return fmt.Errorf("the run was not metered as the API counted (%s, metered)", want)
	}
	return nil
}

// liveBaseURL is the scripted API's address with the path the preset's
// API takes (OpenAI's /v1), so the tool's own paths land where they would.
func liveBaseURL(ep registry.Endpoint, apiURL string) string {
	p, _ := registry.PresetNamed(ep.Agent)
	if u, err := url.Parse(p.Origin); err == nil && u.Path != "" && u.Path != "/" {
		return apiURL + strings.TrimSuffix(u.Path, "/")
	}
	return apiURL
}

// liveEnv is the operator's environment with the preset's key variable
// set to a placeholder: the scripted API takes any key, and a real one
// never leaves for the check.
func liveEnv(ep registry.Endpoint) []string {
	env := os.Environ()
	if p, ok := registry.PresetNamed(ep.Agent); ok && p.KeyEnv != "" {
		env = append(env, p.KeyEnv+"=fleetwatch-live-placeholder")
	}
	return env
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return termtext.Line(lines[len(lines)-1])
}

// logTail is the driver log's last lines, indented under a finding.
func logTail(log string) string {
	if strings.TrimSpace(log) == "" {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	var b strings.Builder
	for _, l := range lines {
		if l = termtext.Line(l); len(l) > 300 {
			l = l[:300] + "…"
		}
		b.WriteString("\n        " + l)
	}
	return b.String()
}
