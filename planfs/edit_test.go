package planfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func editCopy(t *testing.T, tr *Tree, rel string) *EditCopy {
	t.Helper()
	c, err := tr.CopyForEdit(rel)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Discard)
	if filepath.Base(c.Path) != filepath.Base(rel) {
		t.Errorf("the copy %s is not named after the plan %s", c.Path, rel)
	}
	if strings.HasPrefix(c.Path, tr.Project) {
		t.Errorf("the copy %s is inside the project", c.Path)
	}
	return c
}

func TestWriteBack(t *testing.T) {
	tr := mkTree(t, "features/a.md:- **Preferred models:** mid")
	orig, _ := os.ReadFile(tr.Abs("features/a.md"))
	c := editCopy(t, tr, "features/a.md")
	if got, _ := os.ReadFile(c.Path); string(got) != string(orig) {
		t.Fatalf("copy holds %q", got)
	}
	// Unchanged: nothing written, nothing logged, the copy gone.
	if changed, err := tr.WriteBack(c, "op"); changed || err != nil {
		t.Fatalf("unchanged WriteBack = %v, %v", changed, err)
	}
	if _, err := os.Stat(c.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the unchanged copy is left: %v", err)
	}
	c = editCopy(t, tr, "features/a.md")
	edited := "# a, edited\n\n- **Priority:** P1\n"
	os.WriteFile(c.Path, []byte(edited), 0o600)
	if changed, err := tr.WriteBack(c, "op"); !changed || err != nil {
		t.Fatalf("WriteBack = %v, %v", changed, err)
	}
	if got, _ := os.ReadFile(tr.Abs("features/a.md")); string(got) != edited {
		t.Errorf("plan holds %q", got)
	}
	if fi, _ := os.Stat(tr.Abs("features/a.md")); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want the plan's 0644", fi.Mode().Perm())
	}
	if p := scan(t, tr).PlanAt("features/a.md"); p == nil || p.Header.Priority != "P1" {
		t.Errorf("the scan sees %+v", p)
	}
	if l := leftovers(t, tr, "features"); len(l) > 0 {
		t.Errorf("left behind %v", l)
	}
	events, _ := tr.Events()
	if len(events) != 1 || events[0].Event != "edit" || events[0].To != "features/a.md" {
		t.Errorf("events %+v", events)
	}
}

// The plan moved (a claim) or changed on disk while the editor was open:
// the edit is not written, the copy is kept and named, the plan is not
// created again where it was.
func TestWriteBackRefusesAndKeepsTheCopy(t *testing.T) {
	cases := map[string]func(t *testing.T, tr *Tree){
		"moved": func(t *testing.T, tr *Tree) {
			if err := os.Rename(tr.Abs("features/a.md"), tr.Abs("in-progress/a.md")); err != nil {
				t.Fatal(err)
			}
		},
		"changed": func(t *testing.T, tr *Tree) {
			os.WriteFile(tr.Abs("features/a.md"), []byte("# a\n\nchanged by an agent\n"), 0o644)
		},
		"replaced by a symlink": func(t *testing.T, tr *Tree) {
			out := filepath.Join(t.TempDir(), "x.md")
			os.WriteFile(out, []byte("# x\n"), 0o644)
			os.Remove(tr.Abs("features/a.md"))
			os.Symlink(out, tr.Abs("features/a.md"))
		},
	}
	for name, meddle := range cases {
		t.Run(name, func(t *testing.T) {
			tr := mkTree(t, "features/a.md:")
			c := editCopy(t, tr, "features/a.md")
			os.WriteFile(c.Path, []byte("# my edit\n"), 0o600)
			meddle(t, tr)
			before := treeFiles(t, tr.Project)
			changed, err := tr.WriteBack(c, "op")
			if changed || !errors.Is(err, ErrEditKept) || !strings.Contains(err.Error(), c.Path) {
				t.Fatalf("WriteBack = %v, %v; want a refusal naming %s", changed, err, c.Path)
			}
			if got, _ := os.ReadFile(c.Path); string(got) != "# my edit\n" {
				t.Errorf("the copy holds %q", got)
			}
			delete(before, ".plans/logs/events.jsonl")
			after := treeFiles(t, tr.Project)
			delete(after, ".plans/logs/events.jsonl")
			if len(after) != len(before) {
				t.Errorf("the tree changed:\nbefore %v\nafter  %v", before, after)
			}
			for k, v := range before {
				if after[k] != v {
					t.Errorf("%s changed: %q → %q", k, v, after[k])
				}
			}
		})
	}
}

func TestCopyForEditRefusesASymlink(t *testing.T) {
	tr := mkTree(t)
	out := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(out, []byte("# secret\n"), 0o644)
	os.Symlink(out, tr.Abs("features/s.md"))
	if c, err := tr.CopyForEdit("features/s.md"); err == nil {
		c.Discard()
		t.Fatal("a symlinked plan was copied for editing")
	}
	if _, err := tr.CopyForEdit("features/none.md"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing plan: %v", err)
	}
	if _, err := tr.CopyForEdit("../x.md"); err == nil {
		t.Error("a path outside the lanes was copied")
	}
}

func TestWriteBackRefusesAnEmptyCopy(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	c := editCopy(t, tr, "features/a.md")
	os.WriteFile(c.Path, []byte(" \n"), 0o600)
	if _, err := tr.WriteBack(c, "op"); !errors.Is(err, ErrEditKept) {
		t.Errorf("empty copy: %v", err)
	}
	if got, _ := os.ReadFile(tr.Abs("features/a.md")); !strings.HasPrefix(string(got), "# features/a.md") {
		t.Errorf("plan holds %q", got)
	}
}

// An edit leaves the plan where it was: a parked plan edited still returns
// to the lane it was parked from.
func TestEditKeepsTheOrigin(t *testing.T) {
	tr := mkTree(t, "bugs/a.md:- **Preferred models:** mid")
	if _, err := tr.Park("bugs/a.md", "blocked", Agent("op")); err != nil {
		t.Fatal(err)
	}
	c := editCopy(t, tr, "blocked/a.md")
	os.WriteFile(c.Path, []byte("# a, unblocked\n"), 0o600)
	if _, err := tr.WriteBack(c, "op"); err != nil {
		t.Fatal(err)
	}
	dst, err := tr.Return("blocked/a.md", "", Agent("op"))
	if err != nil || dst != "bugs/a.md" {
		t.Errorf("Return after an edit = %q, %v; want bugs/a.md", dst, err)
	}
}
