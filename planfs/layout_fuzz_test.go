package planfs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// layoutPaths are the paths fleetwatch writes in a project, parents first:
// each can be left alone, or made a folder, a file, or a symlink out.
var layoutPaths = []string{
	".plans", ".plans/.leases", ".plans/.leases/.lock", ".plans/.leases/features__a.md.json",
	".plans/.leases/in-progress__a.md.json", ".plans/.leases/in-progress__b.md.json",
	".plans/logs", ".plans/logs/events.jsonl", ".plans/logs/.gitignore",
	".plans/features", ".plans/features/a.md", ".plans/bugs", ".plans/in-progress", ".plans/in-progress/b.md",
	".plans/blocked", ".plans/completed", ".plans/review-needed", ".plans/drafts", ".plans/README.md", ".plans/.gitignore",
	"var", "var/.gitignore", "var/fleet", "var/fleet/.gitignore", "var/fleet/logs", "var/fleet/logs/w1.log",
	"var/fleet/workers", "var/fleet/workers/w1.json", "var/fleet/workers/w1.lock",
	"var/worktrees", "var/worktrees/.lock", "var/worktrees/ports.json",
	".anchor", ".anchor/conventions.md", "ANCHOR-CONVENTIONS.md",
}

// FuzzTreeLayoutStaysInside builds a project whose write paths are, as the
// fuzz bytes say, missing, folders, files or symlinks pointing outside (at
// a file, a folder, or nothing), runs every verb and the workers' writers
// on it, and checks that nothing outside the project changed.
func FuzzTreeLayoutStaysInside(f *testing.F) {
	f.Add([]byte{})
	for i := range layoutPaths {
		for _, kind := range []byte{3, 4, 5} {
			seed := make([]byte, len(layoutPaths))
			seed[i] = kind
			f.Add(seed)
		}
	}
	f.Add([]byte(strings.Repeat("\x01", len(layoutPaths))))
	f.Add([]byte("\x01\x01\x00\x02\x05\x04\x01\x03"))
	f.Fuzz(func(t *testing.T, layout []byte) {
		// Each input has its own folders; the seeds wait on the disk
		// more than the CPU, so they overlap (fuzzing runs them one by one).
		t.Parallel()
		base := t.TempDir()
		root, out := filepath.Join(base, "project"), filepath.Join(base, "outside")
		for _, d := range []string{root, filepath.Join(out, "folder")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(out, "victim"), []byte("keep me\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "folder", "inside"), []byte("keep me too\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := tree(t, out)
		for i, rel := range layoutPaths {
			if i < len(layout) {
				build(t, root, out, rel, layout[i])
			}
		}
		exercise(root)
		if after := tree(t, out); !same(before, after) {
			t.Fatalf("outside the project changed:\nbefore %q\nafter  %q", before, after)
		}
	})
}

// build makes rel in root as kind says (0 leaves it, 1 folder, 2 file with a
// plan or lease-like text, 3 symlink to a folder outside, 4 to a file
// outside, 5 to nothing), unless a parent is not a real folder.
func build(t *testing.T, root, out, rel string, kind byte) {
	p := filepath.Join(root, filepath.FromSlash(rel))
	for d := filepath.Dir(p); d != root; d = filepath.Dir(d) {
		if fi, err := os.Lstat(d); err == nil && !fi.IsDir() {
			return // a parent is a file or a symlink: nothing can sit below it
		}
	}
	if kind%6 == 0 {
		return
	}
	if _, err := os.Lstat(p); err == nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	switch kind % 6 {
	case 1:
		err = os.Mkdir(p, 0o755)
	case 2:
		err = os.WriteFile(p, []byte("# Plan\n\n- **Preferred models:** mid\n\n## Done when\n- x\n"), 0o644)
	case 3:
		err = os.Symlink(filepath.Join(out, "folder"), p)
	case 4:
		err = os.Symlink(filepath.Join(out, "victim"), p)
	case 5:
		err = os.Symlink(filepath.Join(out, "nothing"), p)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// exercise runs what writes: scaffold, every verb over the plans the layout
// may hold, repair, and the workers' log, state, lock and port writers.
// Their errors are expected; only their effects outside matter.
func exercise(root string) {
	_, _ = planfs.Scaffold(root)
	_, _ = planfs.SetOrchestrator(root, "claude:opus")
	if tr, err := planfs.Open(root); err == nil {
		if snap, err := tr.Scan(); err == nil {
			tr.Repair(snap)
			_ = tr.Check(snap)
		}
		_, _ = tr.AddPlan(model.Features, "c.md", "# c\n")
		dst, _ := tr.Claim("features/a.md", "w1", 60)
		if dst != "" {
			_, _ = tr.Renew(dst, planfs.Actor{AgentID: "w1"}, 60)
			_, _ = tr.Park(dst, model.Blocked, planfs.Actor{AgentID: "w1"}.Because("fuzz"))
			_, _ = tr.Return("blocked/a.md", "", planfs.Actor{AgentID: "w1", Force: true})
		}
		_, _ = tr.Claim("features/c.md", "w1", 60)
		_, _ = tr.Release("in-progress/c.md", planfs.Actor{AgentID: "w1"})
		_, _ = tr.Recover("in-progress/b.md", planfs.Actor{AgentID: "w2"}, 60)
		_, _ = tr.Complete("in-progress/b.md", model.Completed, planfs.Actor{AgentID: "w2", Force: true})
		_, _, _ = tr.Promote("drafts/x.md", model.Features, planfs.Actor{AgentID: "w1", Force: true})
		d := &workers.Driver{Tree: tr, Worker: model.Worker{AgentID: "w1"}, TTL: 60}
		if d.Start(nil) == nil {
			d.Finish(0, "fuzz")
		}
	}
	if l, err := look.OpenLog(root, "w1", nil); err == nil {
		l.Printf("fuzz")
		l.Close()
	}
	_ = look.WriteState(root, look.State{AgentID: "w2"})
	_, _ = look.AssignPort(root, "w1", look.PortRange{Lo: 47311, Hi: 47319})
}

// tree is every path under dir with its content, links by target.
func tree(t *testing.T, dir string) map[string]string {
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			m[rel] = "-> " + target
		case e.IsDir():
			m[rel] = "<dir>"
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func same(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
