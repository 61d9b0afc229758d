package planfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/model"
)

// treeFiles is every file under the project with its contents, symlinks as
// their targets: what a refused verb must leave as it was.
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case d.IsDir():
			out[rel+"/"] = ""
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCreatePlanRefusalsWriteNothing(t *testing.T) {
	tr := mkTree(t, "features/taken.md:- **Preferred models:** mid", "completed/2025-01-02-shipped.md:", "drafts/mine.local.md:")
	outside := t.TempDir()
	cases := []struct {
		name string
		n    model.NewPlan
		want error // the sentinel
		says string
	}{
		{"taken in another lane", model.NewPlan{Slug: "taken", Title: "T"}, ErrDestExists, "features/taken.md"},
		{"taken, other case", model.NewPlan{Slug: "TAKEN", Title: "T"}, ErrDestExists, "features/taken.md"},
		{"taken as a dated completed plan", model.NewPlan{Slug: "shipped", Title: "T"}, ErrDestExists, "completed/2025-01-02-shipped.md"},
		{"taken as a local plan", model.NewPlan{Slug: "mine", Title: "T"}, ErrDestExists, "drafts/mine.local.md"},
		{"local twin of a plan", model.NewPlan{Slug: "taken", Title: "T", Local: true}, ErrDestExists, "taken"},
		{"slash", model.NewPlan{Slug: "a/b", Title: "T"}, ErrBadTarget, "not a path"},
		{"dot dot", model.NewPlan{Slug: "..", Title: "T"}, ErrBadTarget, "leading dot"},
		{"ends in .md", model.NewPlan{Slug: "a.md", Title: "T"}, ErrBadTarget, ".md"},
		{"space", model.NewPlan{Slug: "a b", Title: "T"}, ErrBadTarget, "spaces"},
		{"empty slug", model.NewPlan{Title: "T"}, ErrBadTarget, "no slug"},
		{"empty title", model.NewPlan{Slug: "a", Title: " "}, ErrBadTarget, "empty title"},
		{"unknown lane", model.NewPlan{Slug: "a", Title: "T", Lane: "later"}, ErrBadTarget, "lane"},
		{"in-progress", model.NewPlan{Slug: "a", Title: "T", Lane: model.InProgress}, ErrBadTarget, "drafts, bugs or features"},
		{"ready without models", model.NewPlan{Slug: "a", Title: "T", Lane: model.Bugs}, ErrNeedsForce, "Preferred models"},
	}
	before := treeFiles(t, tr.Project)
	for _, c := range cases {
		rel, err := tr.CreatePlan(c.n, "op")
		if rel != "" || !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: CreatePlan = %q, %v; want %v saying %q", c.name, rel, err, c.want, c.says)
		}
		if after := treeFiles(t, tr.Project); !reflect.DeepEqual(after, before) {
			t.Fatalf("%s: the refusal changed the tree:\nbefore %v\nafter  %v", c.name, before, after)
		}
	}
	// A lane that is a symlink out of the project is refused too.
	lane := filepath.Join(tr.Plans, "features")
	if err := os.RemoveAll(lane); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, lane); err != nil {
		t.Fatal(err)
	}
	before = treeFiles(t, tr.Project)
	n := model.NewPlan{Slug: "via-link", Title: "T", Lane: model.Features, Preferred: []string{"mid"}}
	if rel, err := tr.CreatePlan(n, "op"); !errors.Is(err, ErrSymlink) {
		t.Errorf("symlinked lane: CreatePlan = %q, %v; want a symlink refusal", rel, err)
	}
	if after := treeFiles(t, tr.Project); !reflect.DeepEqual(after, before) {
		t.Errorf("symlinked lane: the tree changed: %v", after)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written through the symlink: %v", entries)
	}
}

func TestCreatePlanWritesParsesBackAndLogs(t *testing.T) {
	tr := mkTree(t, "features/other.md:- **Preferred models:** mid")
	n := model.NewPlan{Slug: "fix-login", Title: "Fix the login", Lane: model.Bugs, Value: "high", Priority: "1",
		Preferred: []string{"mid", "claude-sonnet"}, DependsOn: []string{"other", "ghost"}}
	rel, err := tr.CreatePlan(n, "op-1")
	if err != nil || rel != "bugs/fix-login.md" {
		t.Fatalf("CreatePlan = %q, %v", rel, err)
	}
	p := scan(t, tr).PlanAt(rel)
	if p == nil {
		t.Fatalf("the scan does not see %s", rel)
	}
	h := p.Header
	if h.Title != "Fix the login" || h.Value != "high" || h.Priority != "P1" ||
		!reflect.DeepEqual(h.Preferred, []string{"mid", "claude-sonnet"}) || !reflect.DeepEqual(h.DependsOn, []string{"other", "ghost"}) || !h.HasDoneWhen {
		t.Errorf("reads back %+v", h)
	}
	text, _ := os.ReadFile(tr.Abs(rel))
	for _, section := range []string{"## Goal", "## Context", "## Steps", "## Done when", "- **Value:** high"} {
		if !strings.Contains(string(text), section) {
			t.Errorf("no %q in the built-in template's plan:\n%s", section, text)
		}
	}
	events, _ := tr.Events()
	if len(events) != 1 || events[0].Event != "create" || events[0].To != rel || events[0].AgentID != "op-1" {
		t.Errorf("events %+v", events)
	}
	// Once written, the slug is taken everywhere, also as a private plan.
	if _, err := tr.CreatePlan(model.NewPlan{Slug: "fix-login", Title: "Again", Local: true}, "op-1"); !errors.Is(err, ErrDestExists) {
		t.Errorf("second create: %v", err)
	}
	local, err := tr.CreatePlan(model.NewPlan{Slug: "mine", Title: "Mine", Local: true}, "op-1")
	if err != nil || local != "drafts/mine.local.md" {
		t.Errorf("local plan: %q, %v", local, err)
	}
}

func TestCreatePlanUsesTheProjectTemplate(t *testing.T) {
	for _, at := range TemplatePaths {
		t.Run(strings.ReplaceAll(at, "/", "_"), func(t *testing.T) {
			tr := mkTree(t)
			tmpl := "# Plan: <title>\n\n- **Value:** high | medium | low\n- **Preferred models:** small, mid\n\n## Why\n\n## Done when\n- {{slug}} ships\n"
			p := filepath.Join(tr.Project, at)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(tmpl), 0o644); err != nil {
				t.Fatal(err)
			}
			rel, err := tr.CreatePlan(model.NewPlan{Slug: "s", Title: "Ship it", Value: "low", Preferred: []string{"frontier"}}, "op")
			if err != nil {
				t.Fatal(err)
			}
			text, _ := os.ReadFile(tr.Abs(rel))
			want := "# Ship it\n\n- **Priority:** P2\n- **Depends on:** none\n\n- **Value:** low\n- **Preferred models:** frontier\n\n## Why\n\n## Done when\n- s ships\n"
			if string(text) != want {
				t.Errorf("wrote:\n%s\nwant:\n%s", text, want)
			}
		})
	}
	// A template that is a symlink is refused, not replaced by the built-in one.
	tr := mkTree(t)
	secret := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(secret, []byte("# secret\n"), 0o644)
	os.MkdirAll(filepath.Join(tr.Project, "anchor", "templates"), 0o755)
	if err := os.Symlink(secret, filepath.Join(tr.Project, "anchor", "templates", "plan.md")); err != nil {
		t.Fatal(err)
	}
	if rel, err := tr.CreatePlan(model.NewPlan{Slug: "s", Title: "T"}, "op"); err == nil || !strings.Contains(err.Error(), "anchor/templates/plan.md") {
		t.Errorf("symlinked template: %q, %v", rel, err)
	}
	if text, source, _ := mkTree(t).Template(); source != "" || text != model.BuiltinTemplate() {
		t.Errorf("no template: %q from %q", text, source)
	}
}
