package planfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/model"
)

// Each path verbs write in .plans/, made a symlink out of the project, is
// refused by every verb before it changes anything, and what it points at
// stays as it was.
func TestVerbsRefuseSymlinkedWritePaths(t *testing.T) {
	for _, link := range []string{"logs/events.jsonl", "logs", ".leases", ".leases/.lock", "in-progress", "blocked"} {
		for _, dangling := range []bool{false, true} {
			name := strings.ReplaceAll(link, "/", "_")
			if dangling {
				name += "_dangling"
			}
			t.Run(name, func(t *testing.T) {
				tr := mkTree(t, "features/a.md: - **Preferred models:** mid", "in-progress/b.md: x", "blocked/c.md: x", "bugs/d.md: x")
				out := t.TempDir()
				victim := filepath.Join(out, "victim")
				if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				target := victim
				if strings.HasSuffix(link, "logs") || link == ".leases" || !strings.Contains(link, ".") {
					target = out
				}
				if dangling {
					target = filepath.Join(out, "nothing")
				}
				at := tr.Abs(link)
				if err := os.RemoveAll(at); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, at); err != nil {
					t.Fatal(err)
				}
				// A symlinked lane stops only the verbs that move plans
				// through it; the rest may go on.
				lane := map[string]string{"in-progress": "claim", "blocked": "park"}[link]
				refused := func(what string, err error) {
					t.Helper()
					if lane != "" && what != lane {
						return
					}
					if !errors.Is(err, ErrSymlink) || errors.Is(err, ErrClaimed) {
						t.Errorf("%s: got %v, want a symlink refusal", what, err)
					} else if !strings.Contains(err.Error(), Dir+"/"+strings.SplitN(link, "/", 2)[0]) {
						t.Errorf("%s: %q does not name the link", what, err)
					}
				}
				_, err := tr.Claim("features/a.md", "w1", 60)
				refused("claim", err)
				if lane != "" {
					// The lane's verb is checked above; the plan may move on.
				} else if !tr.exists("features/a.md") || tr.ReadLease("features/a.md") != nil && !strings.HasPrefix(link, ".leases") {
					t.Errorf("a refused claim claimed")
				}
				_, err = tr.Park("bugs/d.md", model.Blocked, Actor{AgentID: "w1", Force: true}.Because(""))
				refused("park", err)
				_, err = tr.Return("blocked/c.md", "", Actor{AgentID: "w1", Force: true})
				refused("return", err)
				_, err = tr.Complete("in-progress/b.md", model.Completed, Actor{AgentID: "w1", Force: true})
				refused("complete", err)
				_, err = tr.Recover("in-progress/b.md", Actor{AgentID: "w1"}, 60)
				refused("recover", err)
				_, err = tr.AddPlan(model.Features, "new.md", "# new\n")
				refused("add", err)
				tr.Repair(scan(t, tr))
				if data, _ := os.ReadFile(victim); string(data) != "keep\n" {
					t.Errorf("victim now %q", data)
				}
				if entries, _ := os.ReadDir(out); len(entries) != 1 {
					t.Errorf("made outside: %v", entries)
				}
				// check names it, read-only.
				found := false
				for _, w := range tr.Check(scan(t, tr)) {
					found = found || strings.Contains(w.Message, "symlink")
				}
				if !found {
					t.Errorf("check does not report the symlink")
				}
			})
		}
	}
}

// A symlinked lease file is nobody's claim: it reads as corrupt (so it
// blocks the plan and check shows it), and nothing is written through it.
func TestSymlinkedLeaseFileIsCorrupt(t *testing.T) {
	tr := mkTree(t, "features/a.md: x")
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, model.EncodeLease(model.Lease{Plan: "features/a.md", AgentID: "w9", ClaimedAt: 1, ExpiresAt: 4e9}), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(victim)
	if err := os.Symlink(victim, tr.leasePath("features/a.md")); err != nil {
		t.Fatal(err)
	}
	l := tr.ReadLease("features/a.md")
	if l == nil || !strings.Contains(l.Corrupt, "symlink") {
		t.Fatalf("lease %+v, want corrupt: a symlink", l)
	}
	if _, err := tr.Claim("features/a.md", "w1", 60); err == nil {
		t.Errorf("claimed past a symlinked lease")
	}
	if _, err := tr.Recover("features/a.md", Actor{AgentID: "w1"}, 60); err != nil {
		t.Errorf("recover should clear it: %v", err)
	}
	if after, _ := os.ReadFile(victim); string(after) != string(before) {
		t.Errorf("victim changed: %q", after)
	}
}
