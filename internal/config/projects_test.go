package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseProjects(t *testing.T) {
	ps, err := ParseProjects([]byte("projects:\n  - name: api\n    root: ~/src/api\n  - root: web\n  - {name: ops, root: /srv/ops/}\n"), "/etc/cfg", "/home/op")
	if err != nil {
		t.Fatal(err)
	}
	want := []Project{{"api", "/home/op/src/api", 2}, {"web", "/etc/cfg/web", 4}, {"ops", "/srv/ops", 5}}
	if len(ps) != len(want) {
		t.Fatalf("got %+v", ps)
	}
	for i := range want {
		if ps[i] != want[i] {
			t.Errorf("entry %d: got %+v, want %+v", i, ps[i], want[i])
		}
	}
}

func TestParseProjectsRefuses(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "1: no projects"},
		{"roots: []\n", "1: want one key, projects"},
		{"projects: api\n", "1: projects: want a list"},
		{"projects:\n  - name: api\n", "2: projects: an entry without root"},
		{"projects:\n  - root: /a\n    colour: red\n", "3: projects: unknown key \"colour\""},
		{"projects:\n  - root: /a\n  - root: /b/a\n", "3: projects: name \"a\" is used twice (first at line 2)"},
		{"projects:\n  - root: [a, b]\n", "2: projects: root: want one line of text"},
		{"projects:\n  - just-a-string\n", "2: projects: want an entry like"},
		{"projects:\n  - root: /a\n   bad: indent\n", "1: did not find expected"},
	} {
		_, err := ParseProjects([]byte(c.text), "/d", "/h")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one line starting %q", c.text, err, c.want)
		}
	}
}

func TestLoadProjectsNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ProjectsName)
	if _, err := LoadProjects(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: got %v", err)
	}
	if err := os.WriteFile(path, []byte("projects:\n  - name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadProjects(path)
	if err == nil || err.Error() != path+":2: projects: an entry without root (the project's folder)" {
		t.Fatalf("got %v", err)
	}
}

func TestProjectsFile(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/x/cfg")
	if p, _ := ProjectsFile(); p != "/x/cfg/fleetwatch/projects.yaml" {
		t.Errorf("XDG: got %s", p)
	}
	t.Setenv("XDG_CONFIG_HOME", "relative")
	t.Setenv("HOME", "/home/op")
	if p, _ := ProjectsFile(); p != "/home/op/.config/fleetwatch/projects.yaml" {
		t.Errorf("relative XDG: got %s", p)
	}
}
