package claims_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	_ "github.com/fleetwatch/fleetwatch/planfs/claims/gitclaims" // registers the git backend
)

// git runs git in dir for a test, failing it on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// project is a git checkout on dev whose .plans/ holds features/a.md and
// features/b.md, committed.
func project(t *testing.T, dir string) {
	t.Helper()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.md", "b.md"} {
		if err := os.WriteFile(filepath.Join(dir, ".plans", "features", name), []byte("# "+name+"\n\n- **Priority:** P2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "plans")
}

// backends opens the same project's claims both ways: its lease files,
// and a bare git remote's lease refs (in a clone of it).
func backends(t *testing.T) map[string]func(t *testing.T) (claims.Backend, string) {
	return map[string]func(t *testing.T) (claims.Backend, string){
		"local": func(t *testing.T) (claims.Backend, string) {
			dir := t.TempDir()
			git(t, dir, "init", "-q", "-b", "dev")
			project(t, dir)
			tree, err := planfs.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			return claims.NewLocal(tree), dir
		},
		"git": func(t *testing.T) (claims.Backend, string) {
			root := t.TempDir()
			bare, seed, clone := filepath.Join(root, "remote.git"), filepath.Join(root, "seed"), filepath.Join(root, "clone")
			git(t, root, "init", "-q", "--bare", "-b", "dev", bare)
			git(t, root, "clone", "-q", bare, seed)
			project(t, seed)
			git(t, seed, "push", "-q", "origin", "HEAD:dev")
			git(t, root, "clone", "-q", bare, clone)
			b, err := claims.Open(claims.Config{Backend: "git", Project: clone, Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			return b, clone
		},
	}
}

func viewOf(t *testing.T, b claims.Backend) *claims.View {
	t.Helper()
	v, err := b.View(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// One worker's life with a plan, the same through every backend: a claim
// that a second claimer loses, a renewal, a fenced branch push, a release
// that frees the plan where it was, a claim parked by the operator
// (MoveHeld), an operator's return of the parked plan through Act, and a
// completion. Only where a held plan sits differs: in-progress/ for the
// lease files, its ready lane on a remote.
func TestEveryBackendKeepsOneLeaseProtocol(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			b, dir := open(t)
			defer b.Close()
			w1, w2 := claims.Holder{AgentID: "w1"}, claims.Holder{AgentID: "w2"}
			v := viewOf(t, b)
			held, err := b.Claim(ctx, v, "features/a.md", w1, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			wantRel := map[string]string{"local": "in-progress/a.md", "git": "features/a.md"}[name]
			if held.Slug != "a" || held.Rel != wantRel || held.Lease.AgentID != "w1" || held.Lease.Token == "" {
				t.Fatalf("claimed: %+v", held)
			}
			if _, err := b.Claim(ctx, v, "features/a.md", w2, time.Minute); !errors.Is(err, claims.ErrLost) {
				t.Fatalf("a second claim from the same view: %v, want ErrLost", err)
			}
			if l := viewOf(t, b).Lease("a"); l == nil || l.AgentID != "w1" || !l.Live {
				t.Fatalf("the view's lease on a: %+v", l)
			}
			if held, err = b.Renew(ctx, held, time.Minute); err != nil {
				t.Fatalf("renew: %v", err)
			}
			stale := held
			stale.Lease.Token, stale.Version = "not-the-token", "not-the-version"
			if _, err := b.Renew(ctx, stale, time.Minute); !errors.Is(err, claims.ErrLost) {
				t.Fatalf("renew under a stale lease: %v, want ErrLost", err)
			}

			tip := git(t, dir, "rev-parse", "HEAD")
			u := claims.BranchUpdate{Ref: "refs/heads/feature/a", New: tip}
			if held, err = b.PushBranch(ctx, held, u); err != nil {
				t.Fatalf("push: %v", err)
			}
			git(t, dir, "commit", "-q", "--allow-empty", "-m", "more")
			u.New = git(t, dir, "rev-parse", "HEAD") // still from "": someone's branch is there now
			if _, err := b.PushBranch(ctx, held, u); !errors.Is(err, claims.ErrBranchMoved) {
				t.Fatalf("a push from where the branch no longer is: %v, want ErrBranchMoved", err)
			}

			if err := b.Release(ctx, held, "test"); err != nil {
				t.Fatalf("release: %v", err)
			}
			v = viewOf(t, b)
			if v.Lease("a") != nil || v.PlanRel("a") != "features/a.md" {
				t.Fatalf("after release: lease %+v, plan at %q", v.Lease("a"), v.PlanRel("a"))
			}
			if err := b.Release(ctx, held, "again"); err == nil {
				t.Fatal("a second release of the same lease was taken")
			}

			held, err = b.Claim(ctx, v, "features/a.md", w1, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if rel, err := b.MoveHeld(ctx, held, model.Blocked, "operator", "stuck"); err != nil || rel != "blocked/a.md" {
				t.Fatalf("park a held plan: %q, %v", rel, err)
			}
			v = viewOf(t, b)
			if v.Lease("a") != nil || v.PlanRel("a") != "blocked/a.md" {
				t.Fatalf("after the park: lease %+v, plan at %q", v.Lease("a"), v.PlanRel("a"))
			}
			res, err := claims.Act(ctx, b, v, claims.Op{Verb: model.Return, Slug: "a", To: model.Features, Holder: claims.Holder{AgentID: "operator"}})
			if err != nil || res.Rel != "features/a.md" {
				t.Fatalf("return through Act: %+v, %v", res, err)
			}

			v = viewOf(t, b)
			held, err = b.Claim(ctx, v, "features/b.md", w2, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			to := model.RuleOf(model.Complete).Default
			if rel, err := b.Complete(ctx, held, to); err != nil || rel != string(model.RelOf(to, "b.md")) {
				t.Fatalf("complete: %q, %v", rel, err)
			}
			if v := viewOf(t, b); v.Lease("b") != nil || v.PlanRel("b") != string(model.RelOf(to, "b.md")) {
				t.Fatalf("after completion: lease %+v, plan at %q", v.Lease("b"), v.PlanRel("b"))
			}

			// The operator parks w1's leased plan through Act: one step, the
			// lease dropped with it, whoever's it was.
			if _, err := b.Claim(ctx, viewOf(t, b), "features/a.md", w1, time.Minute); err != nil {
				t.Fatal(err)
			}
			op := claims.Op{Verb: model.Park, Slug: "a", To: model.Blocked, Holder: claims.Holder{AgentID: "operator"}}
			if _, err := claims.Act(ctx, b, viewOf(t, b), op); !errors.Is(err, claims.ErrNotHolder) {
				t.Fatalf("park of w1's lease without force: %v, want ErrNotHolder", err)
			}
			op.Force = true
			res, err = claims.Act(ctx, b, viewOf(t, b), op)
			if err != nil || res.Rel != "blocked/a.md" || res.Dropped == nil || res.Dropped.AgentID != "w1" {
				t.Fatalf("forced park through Act: %+v, %v", res, err)
			}
			if v := viewOf(t, b); v.Lease("a") != nil || v.PlanRel("a") != "blocked/a.md" {
				t.Fatalf("after the forced park: lease %+v, plan at %q", v.Lease("a"), v.PlanRel("a"))
			}
		})
	}
}

// A lease left to expire is taken over, the same through every backend,
// and its old holder is fenced: its renewal and its branch push are
// refused with ErrLost, and nothing of its is pushed.
func TestEveryBackendFencesATakenOverHolder(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b, dir := open(t)
			defer b.Close()
			old, err := b.Claim(ctx, viewOf(t, b), "features/a.md", claims.Holder{AgentID: "w1"}, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.TakeOver(ctx, viewOf(t, b), "a", claims.Holder{AgentID: "w2"}, time.Minute); err == nil {
				t.Fatal("a live lease was taken over")
			}
			time.Sleep(2500 * time.Millisecond) // past TTL and grace, on every clock
			v := viewOf(t, b)
			if l := v.Lease("a"); l == nil || l.Live {
				t.Fatalf("the lease should show expired: %+v", l)
			}
			now, err := b.TakeOver(ctx, v, "a", claims.Holder{AgentID: "w2"}, time.Minute)
			if err != nil {
				t.Fatalf("take over: %v", err)
			}
			if now.Lease.AgentID != "w2" || now.Lease.Token == old.Lease.Token {
				t.Fatalf("taken over: %+v", now.Lease)
			}
			if _, err := b.Renew(ctx, old, time.Minute); !errors.Is(err, claims.ErrLost) {
				t.Fatalf("the old holder's renewal: %v, want ErrLost", err)
			}
			u := claims.BranchUpdate{Ref: "refs/heads/feature/a", New: git(t, dir, "rev-parse", "HEAD")}
			if _, err := b.PushBranch(ctx, old, u); !errors.Is(err, claims.ErrLost) {
				t.Fatalf("the old holder's push: %v, want ErrLost", err)
			}
			if _, err := b.PushBranch(ctx, now, u); err != nil {
				t.Fatalf("the new holder's push: %v", err)
			}
		})
	}
}

// A lease file's refusal reads as ErrLost to a face that asks the
// Backend, in planfs's own words and with its own error kept.
func TestLocalRefusalsKeepPlanfsWords(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "dev")
	project(t, dir)
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := claims.NewLocal(tree)
	ctx := context.Background()
	held, err := b.Claim(ctx, viewOf(t, b), "features/a.md", claims.Holder{AgentID: "w1"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Claim(ctx, viewOf(t, b), "features/a.md", claims.Holder{AgentID: "w2"}, time.Minute)
	if !errors.Is(err, claims.ErrLost) || !errors.Is(err, planfs.ErrNotFound) || strings.Contains(err.Error(), claims.ErrLost.Error()) {
		t.Errorf("a claim of a plan claimed since: %v", err)
	}
	stale := held
	stale.Lease.Token = "not-the-token"
	_, err = b.Renew(ctx, stale, time.Minute)
	var pe *planfs.PlanError
	if !errors.Is(err, claims.ErrLost) || !errors.As(err, &pe) || !errors.Is(err, planfs.ErrNotOwner) {
		t.Errorf("a renewal under a stale token: %v", err)
	}
}
