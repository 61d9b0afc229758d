package serve

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"
)

// here is a client at 127.0.0.1.
var here net.Addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}

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
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKeys(fifo, "", nil); err == nil || !strings.Contains(err.Error(), "fifo: not a regular file") {
		t.Errorf("a FIFO as the operators' file gives %v", err)
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
		id, ok := r.Lookup(c.k, here)
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
	if _, ok := r.Lookup(k2, here); ok {
		t.Fatal("bob is known before he is added")
	}
	write(t, ops, a+" alice\n"+b+" bob\n")
	if id, ok := r.Lookup(k2, here); !ok || id.Agent != "ssh:bob" {
		t.Fatalf("bob added: %+v %v", id, ok)
	}
	write(t, ops, "garbage line\n")
	later := time.Now().Add(time.Second)
	os.Chtimes(ops, later, later)
	if _, ok := r.Lookup(k1, here); !ok {
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

// A FIFO, a world- or group-readable file and a symlink as --host-key are
// refused at once, with the path and what to do; a FIFO never hangs.
func TestHostKeyFileRefused(t *testing.T) {
	project, dir := t.TempDir(), t.TempDir()
	good, err := hostKey(project, filepath.Join(dir, "made"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "made")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key made is %v (%v), want mode 0600", fi, err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	write(t, open, string(good))
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	group := filepath.Join(dir, "group")
	write(t, group, string(good))
	if err := os.Chmod(group, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "made"), link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:  "not a regular file",
		open:  "mode 0644 lets group or others at the private key; run chmod 600 " + open,
		group: "mode 0640",
		link:  "a symbolic link",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := hostKey(project, path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--host-key "+path) {
				t.Errorf("%s: %v, want the path and %q", path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: hostKey still waits after 5s", path)
		}
	}
}

// A reload that meets an option serve does not honour keeps the last good
// keys and logs FILE:LINE.
func TestKeysRereadRefusesOption(t *testing.T) {
	k1, a := pubKey(t)
	_, b := pubKey(t)
	dir := t.TempDir()
	ops := filepath.Join(dir, "ops")
	write(t, ops, a+" alice\n")
	var log bytes.Buffer
	r, err := LoadKeys(ops, "", &log)
	if err != nil {
		t.Fatal(err)
	}
	write(t, ops, "# keys\n"+a+" alice\n"+`tunnel="1" `+b+" bob\n")
	if _, ok := r.Lookup(k1, here); !ok {
		t.Error("the refused line dropped the last good keys")
	}
	if !strings.Contains(log.String(), "ops:3: option \"tunnel=") {
		t.Errorf("the log does not name ops:3: %q", log.String())
	}
}

// from= as OpenSSH reads it: a negated match refuses whatever else
// matches; wildcards and CIDR blocks; IPv4 in IPv6 is IPv4.
func TestFromPatterns(t *testing.T) {
	addr := func(s string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(s), Port: 22} }
	for _, c := range []struct {
		from, ip string
		want     bool
	}{
		{"127.0.0.1", "127.0.0.1", true},
		{"127.0.0.1", "127.0.0.2", false},
		{"10.0.0.0/8", "10.1.2.3", true},
		{"10.0.0.0/8", "11.1.2.3", false},
		{"10.0.0.0/8", "::ffff:10.9.9.9", true},
		{"192.168.1.*", "192.168.1.77", true},
		{"192.168.1.?", "192.168.1.77", false},
		{"!10.0.0.5,10.0.0.0/8", "10.0.0.5", false},
		{"!10.0.0.5,10.0.0.0/8", "10.0.0.6", true},
		{"*,!127.0.0.1", "127.0.0.1", false},
		{"fd00::/8", "fd12::1", true},
		{"*", "2001:db8::1", true},
	} {
		pats, err := parseFrom(c.from)
		if err != nil {
			t.Fatalf("%s: %v", c.from, err)
		}
		if got := (Rules{From: pats}).allows(addr(c.ip)); got != c.want {
			t.Errorf("from=%q for %s: %v, want %v", c.from, c.ip, got, c.want)
		}
	}
	for _, bad := range []string{"", "10.0.0.1/8", "a,,b", "300.0.0.0/8"} {
		if _, err := parseFrom(bad); err == nil {
			t.Errorf("from=%q was taken", bad)
		}
	}
	if !globMatch("a*b*c", "aXXbYYc") || globMatch("a*b", "aXXc") || !globMatch("*", "") {
		t.Error("globMatch")
	}
}

// Options apply in order, as OpenSSH's: restrict then pty allows a
// terminal, pty then restrict does not; names are case-insensitive.
func TestRulesInOrder(t *testing.T) {
	for opts, noPTY := range map[string]bool{"restrict,pty": false, "pty,restrict": true, "NO-PTY": true, "no-port-forwarding": false} {
		r, err := parseRules(strings.Split(opts, ","))
		if err != nil || r.NoPTY != noPTY {
			t.Errorf("%s: %+v %v, want NoPTY %v", opts, r, err, noPTY)
		}
	}
}
