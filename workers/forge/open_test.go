package forge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/config"
)

func TestTokenFromTheEnvironment(t *testing.T) {
	t.Setenv("FW_FORGE_T", "  abc123\n")
	tok, err := Token(config.Forge{TokenEnv: "FW_FORGE_T"})
	if err != nil || tok != "abc123" {
		t.Fatalf("%q %v", tok, err)
	}
	t.Setenv("FW_FORGE_T", "")
	if _, err := Token(config.Forge{TokenEnv: "FW_FORGE_T"}); err == nil || !strings.Contains(err.Error(), "$FW_FORGE_T is empty or unset") {
		t.Fatalf("got %v", err)
	}
}

func TestTokenFileOnlyItsOwnerReads(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "token")
	if err := os.WriteFile(p, []byte("tok-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := Token(config.Forge{TokenFile: p}); err != nil || tok != "tok-1" {
		t.Fatalf("%q %v", tok, err)
	}
	for _, c := range []struct {
		name string
		prep func(p string)
		want string
	}{
		{"readable by others", func(p string) { os.Chmod(p, 0o644) }, "can be read by others (mode 0644): chmod 600"},
		{"two words", func(p string) { os.WriteFile(p, []byte("a b\n"), 0o600) }, "does not hold one token on one line"},
		{"empty", func(p string) { os.WriteFile(p, nil, 0o600) }, "does not hold one token on one line"},
		{"too big", func(p string) { os.WriteFile(p, []byte(strings.Repeat("x", maxToken+1)), 0o600) }, "does not hold one token"},
		{"a folder", func(p string) { os.Mkdir(p, 0o700) }, "is not a regular file"},
		{"missing", func(p string) {}, "no such file"},
	} {
		p := filepath.Join(t.TempDir(), "token")
		if c.name != "missing" && c.name != "a folder" {
			os.WriteFile(p, []byte("x\n"), 0o600)
		}
		c.prep(p)
		if _, err := Token(config.Forge{TokenFile: p}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestBasicAuthEnvNamesOnlyTheForge(t *testing.T) {
	env := basicAuthEnv("https://git.example.com/", "x", "tok")
	want := []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.https://git.example.com/.extraHeader", "GIT_CONFIG_VALUE_0=Authorization: Basic eDp0b2s="}
	if strings.Join(env, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%q", env)
	}
}
