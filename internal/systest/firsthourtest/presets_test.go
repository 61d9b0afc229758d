package firsthourtest

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/registry"
)

// standIn writes bin/name, a stand-in for a coding agent: it records its
// argv (one NUL-ended word each) and FLEET_* environment into rec, then
// works as an agent does: a review prints its verdict; a build commits.
func standIn(t *testing.T, bin, name, rec string) {
	t.Helper()
	script := `#!/bin/sh
if [ "$1" = --version ]; then echo "0.0.0 (stand-in)"; exit 0; fi
printf '%s\0' "$@" > ` + strconv.Quote(filepath.Join(rec, name+".args")) + `
env | grep '^FLEET_' > ` + strconv.Quote(filepath.Join(rec, name+".env")) + `
if [ "$FLEET_MODE" = review ]; then echo ACCEPT; echo "the stand-in read it"; exit 0; fi
if [ "$FLEET_MODE" = plan ]; then printf '# Plan\n\n## Files in scope\n- standin.txt\n' > "$FLEET_PROPOSAL"; exit 0; fi
echo "done by the stand-in" > standin.txt
if git rev-parse --git-dir >/dev/null 2>&1; then
  git add standin.txt && git -c user.name=standin -c user.email=standin@example.com commit -qm "stand-in: work the plan"
fi
`
	if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// recorded is what the stand-in called name was given: its argv and its
// FLEET_* variables.
func recorded(t *testing.T, rec, name string) ([]string, map[string]string) {
	t.Helper()
	args, err := os.ReadFile(filepath.Join(rec, name+".args"))
	if err != nil {
		t.Fatalf("the stand-in %s never ran: %v", name, err)
	}
	envText, _ := os.ReadFile(filepath.Join(rec, name+".env"))
	env := map[string]string{}
	for _, line := range strings.Split(string(envText), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return strings.Split(strings.TrimSuffix(string(args), "\x00"), "\x00"), env
}

// filled is a preset's argv with its placeholders filled in from the
// FLEET_* variables the agent got: what it must have been given.
func filled(argv []string, env map[string]string) []string {
	var pairs []string
	for _, k := range []string{"plan", "model", "worktree", "slug", "port", "agent_id", "commit", "base", "proposal", "base_url"} {
		pairs = append(pairs, "{"+k+"}", env["FLEET_"+strings.ToUpper(k)])
	}
	r := strings.NewReplacer(pairs...)
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = r.Replace(a)
	}
	return out
}

// pathWith is PATH with bin first.
func pathWith(bin string) []string {
	return []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
}

// Each preset's build runs its program with exactly the preset's argv: the
// prompt naming the claimed plan and the worktree, the endpoint's model,
// the mode that lets it edit and commit; and its commit reaches review.
func TestPresetBuildArgv(t *testing.T) {
	t.Parallel()
	for _, p := range registry.Presets {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/fix-it.md"})
			bin, rec := t.TempDir(), t.TempDir()
			standIn(t, bin, p.Program, rec)
			writeFile(t, dir, "endpoints.yaml", "sandbox_write: ["+strconv.Quote(rec)+"]\nendpoints:\n"+
				"  - name: box\n    tier: mid\n    model: 'm \"1\"'\n    agent: "+p.Name+"\n")
			r := fwtest.RunEnv(t, dir, pathWith(bin), "work-once", "--run", "--ensure-worktree", "--endpoint", "box", "--agent-id", "mid-1")
			if r.Code != 0 || !fwtest.Exists(dir, "review-needed/fix-it.md") {
				t.Fatalf("work-once --run: %v", r)
			}
			args, env := recorded(t, rec, p.Program)
			want := filled(p.Build, env)
			if !slices.Equal(args, want[1:]) {
				t.Errorf("argv:\n got %q\nwant %q", args, want[1:])
			}
			wt := filepath.Join(dir, "var", "worktrees", "mid-1")
			if env["FLEET_MODEL"] != `m "1"` || env["FLEET_WORKTREE"] != wt || !strings.HasSuffix(env["FLEET_PLAN"], "/.plans/in-progress/fix-it.md") {
				t.Errorf("placeholders: %v", env)
			}
			joined := strings.Join(args, "\n")
			if !strings.Contains(joined, env["FLEET_PLAN"]) || !strings.Contains(joined, `m "1"`) || !strings.Contains(joined, "Commit your work") {
				t.Errorf("the argv does not name the plan, the model and the commit: %q", args)
			}
			if log := fwtest.GitOut(t, dir, "log", "--format=%s", "feature/fix-it"); !strings.HasPrefix(log, "stand-in: work the plan") {
				t.Errorf("the stand-in's commit is not on the plan's branch: %q", log)
			}
		})
	}
}

// Each preset with a plan mode runs its plan argv for a plan_first
// endpoint, and its proposal reaches the inbox.
func TestPresetPlanArgv(t *testing.T) {
	t.Parallel()
	for _, p := range registry.Presets {
		if p.Plan == nil {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/fix-it.md"})
			bin, rec := t.TempDir(), t.TempDir()
			standIn(t, bin, p.Program, rec)
			writeFile(t, dir, "endpoints.yaml", "sandbox_write: ["+strconv.Quote(rec)+"]\nendpoints:\n"+
				"  - name: box\n    tier: mid\n    model: m-1\n    plan_first: true\n    agent: "+p.Name+"\n")
			r := fwtest.RunEnv(t, dir, pathWith(bin), "work-once", "--run", "--ensure-worktree", "--endpoint", "box", "--agent-id", "mid-1")
			if r.Code != 0 {
				t.Fatalf("work-once --run: %v", r)
			}
			args, env := recorded(t, rec, p.Program)
			if want := filled(p.Plan, env); !slices.Equal(args, want[1:]) || env["FLEET_MODE"] != "plan" {
				t.Errorf("plan argv:\n got %q\nwant %q (%v)", args, want[1:], env)
			}
			if r := fwtest.Run(t, dir, "inbox"); r.Code != 0 || !strings.Contains(r.Stdout, "fix-it") || !strings.Contains(r.Stdout, "standin.txt") {
				t.Errorf("the proposal is not in the inbox: %v", r)
			}
		})
	}
}

// A preset's review runs read-only with its review argv, and its verdict
// is stored; command: on the endpoint replaces the preset's build.
func TestPresetReviewArgvAndCommandOverride(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/fix-it.md"})
	bin, rec := t.TempDir(), t.TempDir()
	standIn(t, bin, "claude", rec)
	standIn(t, bin, "my-agent", rec)
	writeFile(t, dir, "endpoints.yaml", "sandbox_write: ["+strconv.Quote(rec)+"]\nendpoints:\n"+
		"  - name: author\n    tier: mid\n    model: sonnet\n    agent: claude\n    command: [my-agent, '{plan}']\n"+
		"  - name: reviewer\n    tier: reasoner\n    model: opus\n    agent: claude\n")
	if r := fwtest.RunEnv(t, dir, pathWith(bin), "work-once", "--run", "--ensure-worktree", "--endpoint", "author", "--agent-id", "mid-1"); r.Code != 0 {
		t.Fatalf("work-once --run: %v", r)
	}
	args, env := recorded(t, rec, "my-agent")
	if !slices.Equal(args, []string{env["FLEET_PLAN"]}) {
		t.Errorf("command: did not override the preset: %q", args)
	}
	r := fwtest.RunEnv(t, dir, pathWith(bin), "review", "fix-it", "--peer", "--endpoint", "reviewer", "--agent-id", "rev-1")
	if r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, "ACCEPT") {
		t.Fatalf("review --peer: %v", r)
	}
	claude, _ := registry.PresetNamed("claude")
	args, env = recorded(t, rec, "claude")
	if want := filled(claude.Review, env); !slices.Equal(args, want[1:]) || env["FLEET_MODE"] != "review" || env["FLEET_MODEL"] != "opus" {
		t.Errorf("review argv:\n got %q\nwant %q (%v)", args, want[1:], env)
	}
}

func writeFile(t *testing.T, dir, rel, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, rel), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
