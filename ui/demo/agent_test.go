package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// agentWorktree is an agent worktree (under var/worktrees/) with one
// commit, main.go in it, and the plan text at plan.md beside it.
func agentWorktree(t *testing.T, plan string) (wt, planPath string) {
	t.Helper()
	root := t.TempDir()
	wt = filepath.Join(root, "var", "worktrees", "mid-1")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "feature/x"}, {"add", "main.go"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start"}} {
		if _, err := builderGit(wt, args...); err != nil {
			t.Fatal(err)
		}
	}
	planPath = filepath.Join(root, "x.md")
	if err := os.WriteFile(planPath, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	return wt, planPath
}

// The stand-in's commit touches only what the scope it was approved for
// allows: the approved plan's Files in scope when there is one, else the
// plan's; changes/<slug>.md when the plan declares none.
func TestAgentStaysInScope(t *testing.T) {
	t.Parallel()
	const plan = "# Plan: X\n\n## Goal\nDo x.\n"
	for _, tc := range []struct {
		name, plan, approved string
		want                 string // the one file the commit touches; "" when the agent must refuse
	}{
		{"no scope", plan, "", "changes/x.md"},
		{"approved share-links", plan, sampleFile(t, "project/var/fleet/run/proposals/share-links/1.md"), "web/share.html"},
		{"plan's own folder", plan + "\n## Files in scope\n- docs/\n", "", "docs/x.md"},
		{"an existing Go file", plan + "\n## Files in scope\n- main.go\n- new.go\n", "", "main.go"},
		{"nothing writable", plan + "\n## Files in scope\n- new.go\n- src/*.go\n", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wt, planPath := agentWorktree(t, tc.plan)
			env := AgentEnv{Plan: planPath, Worktree: wt, AgentID: "mid-1", Slug: "x"}
			scopeText := tc.plan
			if tc.approved != "" {
				env.ApprovedPlan = filepath.Join(filepath.Dir(planPath), "approved.md")
				if err := os.WriteFile(env.ApprovedPlan, []byte(tc.approved), 0o644); err != nil {
					t.Fatal(err)
				}
				scopeText = tc.approved
			}
			var out bytes.Buffer
			err := Agent(env, &out, time.Millisecond)
			head, _ := builderGit(wt, "rev-list", "--count", "HEAD")
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), "approved scope") || head != "1" {
					t.Errorf("err %v, %s commits; want a refusal and no commit", err, head)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			touched, _ := builderGit(wt, "diff", "--name-only", "HEAD~1", "HEAD")
			if touched != tc.want {
				t.Errorf("the commit touches %q, want %q", touched, tc.want)
			}
			if sc, found, _ := model.ParseScope(scopeText); found {
				if v := sc.Violations(strings.Fields(touched)); len(v) > 0 {
					t.Errorf("out of the approved scope: %v", v)
				}
			}
		})
	}
}
