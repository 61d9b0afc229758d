package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChecksCache(t *testing.T) {
	s, err := Parse([]byte("checks_cache:\n  go: true\n  operator_go_cache: false\nchecks:\n  - name: t\n    run: [npm, test]\n    cache: {npm_config_cache: ~/.npm, CARGO_HOME: /opt/cargo}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.ChecksCache.Off || !s.ChecksCache.NoOperator {
		t.Errorf("checks_cache read as %+v", s.ChecksCache)
	}
	if c := s.Checks[0].Cache; len(c) != 2 || c["npm_config_cache"] != "~/.npm" || c["CARGO_HOME"] != "/opt/cargo" {
		t.Errorf("cache: read as %v", c)
	}
	if s, _ := Parse([]byte("checks_cache: {go: false}\n")); !s.ChecksCache.Off || s.ChecksCache.NoOperator {
		t.Errorf("go: false read as %+v", s.ChecksCache)
	}
	if s, _ := Parse(nil); s.ChecksCache != (ChecksCache{}) {
		t.Errorf("default %+v", s.ChecksCache)
	}
}

func TestChecksCacheErrors(t *testing.T) {
	check := "checks:\n  - name: t\n    run: [x]\n    cache:\n"
	for _, c := range []struct{ in, want string }{
		{"checks_cache: off\n", "1: checks_cache: want a mapping"},
		{"checks_cache:\n  go: yes please\n", "2: checks_cache: go: want true or false"},
		{"checks_cache:\n  trusted: true\n", `2: unknown key "trusted" in checks_cache (known: go, operator_go_cache)`},
		{"checks:\n  - name: t\n    run: [x]\n    cache: [a]\n", "4: cache: want NAME: folder lines"},
		{check + "      npm_config_cache: .npm\n", "5: cache: npm_config_cache: want an absolute folder or one under ~/"},
		{check + "      GOCACHE: /tmp/x\n", "5: cache: GOCACHE is set by fleetwatch"},
		{check + "      1A: /x\n", `5: cache: "1A" is not a variable name`},
		{check + "      A: [/x]\n", "5: cache: A: want an absolute folder"},
	} {
		_, err := Parse([]byte(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want %q", c.in, err, c.want)
		}
	}
	// Load names the file and the line.
	dir := t.TempDir()
	p := filepath.Join(dir, File)
	os.WriteFile(p, []byte("checks_cache:\n  go: 1\n"), 0o644)
	if _, err := Load(dir); err == nil || !strings.HasPrefix(err.Error(), p+":2: checks_cache: go:") {
		t.Errorf("Load: %v", err)
	}
}
