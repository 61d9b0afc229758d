package contain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The agent's store gets the project's layout and identity keys, each
// value read back by git as it was, and nothing that names a remote, a
// credential, a program or another file.
func TestStoreConfigKeepsOnlyTheAllowedKeys(t *testing.T) {
	project := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", project).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	name := "Op \"Q\" \\ O'Brien\t#1; x"
	set := [][2]string{
		{"user.name", name},
		{"user.email", "op@example.com"},
		{"core.autocrlf", "input"},
		{"extensions.objectFormat", "sha1"},
		{"remote.origin.url", "https://secret@example.com/r.git"},
		{"url.https://secret@example.com/.insteadOf", "x:"},
		{"credential.helper", "store"},
		{"http.extraHeader", "Authorization: secret"},
		{"include.path", "/elsewhere"},
		{"core.hooksPath", "/elsewhere"},
		{"core.sshCommand", "ssh -i secret"},
		{"core.fsmonitor", "/elsewhere"},
		{"filter.x.clean", "run"},
		{"core.bare", "true"},
	}
	cfg := filepath.Join(project, ".git", "config")
	for _, kv := range set {
		if out, err := exec.Command("git", "config", "--file", cfg, kv[0], kv[1]).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	text, err := storeConfig(project, cfg)
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(t.TempDir(), "config")
	os.WriteFile(store, []byte(text), 0o644)
	out, err := exec.Command("git", "config", "--file", store, "--null", "--list").Output()
	if err != nil {
		t.Fatalf("git cannot read the store's config: %v\n%s", err, text)
	}
	got := map[string]string{}
	for _, e := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		k, v, _ := strings.Cut(e, "\n")
		got[k] = v
	}
	want := map[string]string{
		"user.name": name, "user.email": "op@example.com", "core.autocrlf": "input",
		"extensions.objectformat": "sha1", "core.bare": "false",
		"core.repositoryformatversion": "0", "core.filemode": "true", "core.logallrefupdates": "true",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("the store's config has %s = %q", k, got[k])
		}
	}
}
