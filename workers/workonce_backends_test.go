package workers

import (
	"bytes"
	"context"
	"fmt"
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

func gitT(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// plansIn commits a .plans/ tree with two ready plans to the checkout dir.
func plansIn(t *testing.T, dir string) {
	t.Helper()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.md", "b.md"} {
		os.WriteFile(filepath.Join(dir, ".plans", "features", name), []byte("# "+name+"\n\n- **Priority:** P2\n"), 0o644)
	}
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-qm", "plans")
}

// A claim-only work-once is the same loop whichever backend keeps the
// claims: two runs claim the two plans in pick order and print each
// plan's path, the third finds nothing (exit 1), and the backend's view
// shows both held by the worker. Only the path differs: a lease file's
// plan moved to in-progress/, a remote's stays in its ready lane.
func TestWorkOnceClaimsThroughEveryBackend(t *testing.T) {
	for _, name := range []string{"local", "git"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			dir := filepath.Join(root, "project")
			var b claims.Backend
			if name == "local" {
				gitT(t, root, "init", "-q", "-b", "dev", dir)
				plansIn(t, dir)
			} else {
				bare, seed := filepath.Join(root, "remote.git"), filepath.Join(root, "seed")
				gitT(t, root, "init", "-q", "--bare", "-b", "dev", bare)
				gitT(t, root, "clone", "-q", bare, seed)
				plansIn(t, seed)
				gitT(t, seed, "push", "-q", "origin", "HEAD:dev")
				gitT(t, root, "clone", "-q", bare, dir)
				var err error
				if b, err = claims.Open(claims.Config{Backend: "git", Project: dir, Timeout: 20 * time.Second}); err != nil {
					t.Fatal(err)
				}
			}
			tree, err := planfs.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			worker := model.Worker{AgentID: "w1", Tier: model.Mid}
			once := func() (Status, string, string) {
				var stdout, stderr bytes.Buffer
				w := &WorkOnce{Tree: tree, Worker: worker, Claims: b, Where: "--claims " + name, TTL: 900, MaxPlans: 1, Stdout: &stdout,
					NewDriver: func(argv []string) (*Driver, error) {
						return &Driver{Tree: tree, Worker: worker, Argv: argv, TTL: 900}, nil
					},
					Say: func(format string, args ...any) { fmt.Fprintf(&stderr, format+"\n", args...) }}
				return w.Do(context.Background()), stdout.String(), stderr.String()
			}
			lane := map[string]model.Lane{"local": model.InProgress, "git": model.Features}[name]
			for _, plan := range []string{"a.md", "b.md"} {
				code, out, errs := once()
				if want := tree.Abs(string(model.RelOf(lane, plan))) + "\n"; code != StatusOK || out != want {
					t.Fatalf("claim %s: %d %q (want %q), stderr %q", plan, code, out, want, errs)
				}
			}
			if code, out, errs := once(); code != StatusNothing || out != "" {
				t.Fatalf("nothing left: %d %q, stderr %q", code, out, errs)
			}
			if b == nil {
				b = claims.NewLocal(tree)
			}
			v, err := b.View(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, slug := range []string{"a", "b"} {
				if l := v.Lease(slug); l == nil || l.AgentID != "w1" || !l.Live {
					t.Errorf("%s's lease: %+v", slug, l)
				}
			}
		})
	}
}
