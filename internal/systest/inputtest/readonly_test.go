package inputtest

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// treeState is every file and folder under dir but .git/: kind, size,
// mtime and content, so any write shows.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// work-once --list, board, check and watch status change nothing in the
// project, whatever dead claimers left; they show what the next claim will
// repair and rank as if it had.
func TestReadOnlyFacesNeverWrite(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/abandoned.md"},
		fwtest.Plan{Rel: "in-progress/cut-short.md"},
		fwtest.Plan{Rel: "in-progress/expired.md"},
		fwtest.Plan{Rel: "features/later.md"},
	)
	testkit.Git(t, dir, "init", "-q")
	now := float64(time.Now().UnixNano()) / 1e9
	scope, pid := planfs.PIDScope(), testkit.DeadPID(t)
	dead := func(rel string) map[string]any {
		return map[string]any{"plan": rel, "agent_id": "w9", "claimed_at": now - 5, "expires_at": now + 3600, "pid": pid, "pid_scope": scope, "token": "0123456789abcdef"}
	}
	fwtest.PutLease(t, dir, "features/abandoned.md", dead("features/abandoned.md"))
	fwtest.PutLease(t, dir, "features/cut-short.md", dead("features/cut-short.md"))
	fwtest.PutLease(t, dir, "in-progress/expired.md", fwtest.AnchorLease("in-progress/expired.md", "py", 7200, 3600))
	fwtest.PutLease(t, dir, "in-progress/gone.md", fwtest.AnchorLease("in-progress/gone.md", "py", 10, 3600))
	// A tree without its .leases/ and logs/ folders stays without them too.
	bare := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/b.md"})
	for _, d := range []string{".leases", "logs"} {
		if err := os.RemoveAll(filepath.Join(bare, ".plans", d)); err != nil {
			t.Fatal(err)
		}
	}
	faces := [][]string{
		{"work-once", "--list"}, {"work-once", "--list", "--json"}, {"work-once", "--list", "--tier", "small"},
		{"board", "--once"}, {"board", "--json"}, {"board", "--once", "--include-parked"},
		{"check"}, {"check", "--json"}, {"watch", "status"},
	}
	for _, d := range []string{dir, bare} {
		before := treeState(t, d)
		for _, args := range faces {
			r := fwtest.Run(t, d, args...)
			if after := treeState(t, d); fmt.Sprint(after) != fmt.Sprint(before) {
				for k, v := range after {
					if before[k] != v {
						t.Errorf("%v changed %s: %q → %q", args, k, before[k], v)
					}
				}
				for k := range before {
					if _, ok := after[k]; !ok {
						t.Errorf("%v removed %s", args, k)
					}
				}
				t.Fatalf("%v wrote to the tree: %v", args, r)
			}
		}
	}

	r := fwtest.Run(t, dir, "work-once", "--list")
	for _, want := range []string{"abandoned by w9: the next claim clears it", "w9's claim was cut short when it died: the next claim puts it back in features/", "lease of a plan that is gone"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("--list should say %q:\n%v", want, r)
		}
	}
	// Ranked as the next claim sees the tree: both plans are claimable.
	var ranked []string
	for _, line := range strings.Split(r.Stdout, "\n") {
		if f := strings.Split(line, "\t"); len(f) > 1 && strings.HasPrefix(f[0], "features/") {
			ranked = append(ranked, f[0]+"="+f[len(f)-1])
		}
	}
	if got := strings.Join(ranked, " "); got != "features/abandoned.md=- features/cut-short.md=- features/later.md=-" {
		t.Errorf("ready plans as the next claim sees them: %s\n%v", got, r)
	}
	// And the next claim does it: it takes the abandoned plan first.
	if r := fwtest.Run(t, dir, "work-once", "--agent-id", "w1"); r.Code != 0 || !strings.Contains(r.Stdout, "in-progress/abandoned.md") {
		t.Fatalf("the next claim: %v", r)
	}
	if !fwtest.Exists(dir, "features/cut-short.md") || fwtest.Exists(dir, ".leases/in-progress__gone.md.json") {
		t.Errorf("the claim should have made the repairs --list announced")
	}
}

// A read-only face reports a symlinked write path and goes on.
func TestReadOnlyFacesReportSymlinks(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, ".plans", "logs", "events.jsonl"))
	if err := os.Symlink(victim, filepath.Join(dir, ".plans", "logs", "events.jsonl")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "var", "fleet"), 0o755)
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "var", "fleet", "logs")); err != nil {
		t.Fatal(err)
	}
	r := fwtest.Run(t, dir, "work-once", "--list")
	if r.Code != 0 || !strings.Contains(r.Stdout, "features/a.md") || !strings.Contains(r.Stderr, "logs/events.jsonl: is a symlink") || !strings.Contains(r.Stderr, "var/fleet/logs: is a symlink") {
		t.Errorf("--list should list the plan and name both symlinks: %v", r)
	}
	if r := fwtest.Run(t, dir, "board", "--json"); r.Code != 0 || !strings.Contains(r.Stdout, `"file": "logs/events.jsonl"`) || !strings.Contains(r.Stdout, `"file": "var/fleet/logs"`) {
		t.Errorf("board --json should carry both as warnings: %v", r)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep\n" {
		t.Errorf("the file outside changed: %q", data)
	}
}
