package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		text, integration, err string
	}{
		{text: "", integration: ""},
		{text: "# nothing set yet\n", integration: ""},
		{text: "integration: trunk\n", integration: "trunk"},
		{text: "integration: release/2.x   # lands here\n", integration: "release/2.x"},
		{text: "\n\nintegrashun: dev\n", err: "3: unknown key \"integrashun\""},
		{text: "integration: dev\nintegration: main\n", err: "2: integration is set twice (first at line 1)"},
		{text: "integration: x.lock\n", err: "1: integration: git refuses branch name \"x.lock\""},
		{text: "integration: [a, b]\n", err: "1: integration: want a branch name"},
		{text: "integration:\n", err: "1: integration: want a branch name"},
		{text: "- dev\n", err: "1: expected settings as `key: value` lines"},
		{text: "integration: dev\n  bad: [\n", err: "2: "},
	} {
		s, err := Parse([]byte(c.text))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.text, err)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one starting %q", c.text, err, c.err)
		case c.err == "" && s.Integration != c.integration:
			t.Errorf("%q: integration %q, want %q", c.text, s.Integration, c.integration)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error on more than one line: %q", c.text, err)
		}
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	if s, err := Load(dir); err != nil || s != (Settings{}) {
		t.Fatalf("no file is the defaults: %+v %v", s, err)
	}
	p := filepath.Join(dir, File)
	os.WriteFile(p, []byte("integration: trunk\nqueue: 3\n"), 0o644)
	if _, err := Load(dir); err == nil || err.Error() != p+`:2: unknown key "queue" (known: integration)` {
		t.Fatalf("error %v", err)
	}
	os.WriteFile(p, []byte("integration: trunk\n"), 0o644)
	if s, err := Load(dir); err != nil || s.Integration != "trunk" || s.Path != p {
		t.Fatalf("%+v %v", s, err)
	}
	os.Remove(p)
	os.Mkdir(p, 0o755)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a folder named %s: %v", File, err)
	}
}
