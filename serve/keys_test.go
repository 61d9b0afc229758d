package serve

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

func pubKey(t *testing.T) (gossh.PublicKey, string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := gossh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k, strings.TrimSpace(string(gossh.MarshalAuthorizedKey(k)))
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A bad line is named FILE:LINE; options, comments and blank lines are fine.
func TestParseKeysNamesTheLine(t *testing.T) {
	_, a := pubKey(t)
	keys, err := parseKeys("ops", []byte("# team\n\n"+`no-pty,from="10.0.0.0/8" `+a+" alice@laptop\n"))
	if err != nil || len(keys) != 1 || keys[0].comment != "alice@laptop" {
		t.Fatalf("parseKeys: %v %+v", err, keys)
	}
	_, err = parseKeys("ops", []byte(a+" a\n\nssh-ed25519 not-base64 bob\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "ops:3: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a bad third line gives %v, want one line starting ops:3:", err)
	}
	dir := t.TempDir()
	if _, err := LoadKeys(filepath.Join(dir, "missing"), "", nil); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing file gives %v", err)
	}
}

// Agent ids: the comment when unique, else with the fingerprint's first 8,
// sanitised; no comment is the fingerprint alone. A key in both files is a viewer.
func TestIdentities(t *testing.T) {
	k1, a := pubKey(t)
	k2, b := pubKey(t)
	k3, c := pubKey(t)
	k4, d := pubKey(t)
	dir := t.TempDir()
	ops, views := filepath.Join(dir, "ops"), filepath.Join(dir, "views")
	write(t, ops, a+" alice@laptop\n"+b+" dup\n"+d+"\n")
	write(t, views, c+" dup\n"+a+" alice@laptop\n")
	r, err := LoadKeys(ops, views, nil)
	if err != nil {
		t.Fatal(err)
	}
	fp8 := func(k gossh.PublicKey) string { return strings.TrimPrefix(gossh.FingerprintSHA256(k), "SHA256:")[:8] }
	for _, c := range []struct {
		k      gossh.PublicKey
		agent  string
		viewer bool
	}{
		{k1, "ssh:alice@laptop", true},
		{k2, "ssh:dup-" + sanitize(fp8(k2)), false},
		{k3, "ssh:dup-" + sanitize(fp8(k3)), true},
		{k4, "ssh:" + sanitize(fp8(k4)), false},
	} {
		id, ok := r.Lookup(c.k)
		if !ok || id.Agent != c.agent || id.Viewer != c.viewer || id.Fingerprint != gossh.FingerprintSHA256(c.k) {
			t.Errorf("identity %+v %v, want %s viewer=%v", id, ok, c.agent, c.viewer)
		}
	}
	if got := sanitize("a b/c+d@x.y_z"); got != "a-b-c-d@x.y_z" {
		t.Errorf("sanitize gives %q", got)
	}
}

// The files are re-read when they change; one that turns bad keeps the
// last good keys and says why.
func TestKeysReread(t *testing.T) {
	k1, a := pubKey(t)
	k2, b := pubKey(t)
	dir := t.TempDir()
	ops := filepath.Join(dir, "ops")
	write(t, ops, a+" alice\n")
	var log bytes.Buffer
	r, err := LoadKeys(ops, "", &log)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup(k2); ok {
		t.Fatal("bob is known before he is added")
	}
	write(t, ops, a+" alice\n"+b+" bob\n")
	if id, ok := r.Lookup(k2); !ok || id.Agent != "ssh:bob" {
		t.Fatalf("bob added: %+v %v", id, ok)
	}
	write(t, ops, "garbage line\n")
	later := time.Now().Add(time.Second)
	os.Chtimes(ops, later, later)
	if _, ok := r.Lookup(k1); !ok {
		t.Error("a bad file dropped the last good keys")
	}
	if !strings.Contains(log.String(), "ops:1") {
		t.Errorf("the log does not say why: %q", log.String())
	}
}

// The host key is made once, 0600, in OpenSSH's format; a symlink in its
// place is refused.
func TestHostKeyMadeOnce(t *testing.T) {
	project := t.TempDir()
	first, err := hostKey(project, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(project, defaultHostKey)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || !bytes.Contains(first, []byte("OPENSSH PRIVATE KEY")) {
		t.Fatalf("host key %v %v:\n%s", fi, err, first)
	}
	again, err := hostKey(project, "")
	if err != nil || !bytes.Equal(first, again) {
		t.Errorf("the host key changed on the second start (%v)", err)
	}
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, "var/fleet"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(other, "var/fleet/serve")); err != nil {
		t.Fatal(err)
	}
	if _, err := hostKey(other, ""); err == nil {
		t.Error("a symlinked var/fleet/serve was followed")
	}
	given := filepath.Join(t.TempDir(), "hk")
	k, err := hostKey(project, given)
	if err != nil || len(k) == 0 {
		t.Fatalf("--host-key made: %v", err)
	}
	if k2, _ := hostKey(project, given); !bytes.Equal(k, k2) {
		t.Error("--host-key was made again")
	}
}
