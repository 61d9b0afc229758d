package serve_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
	"github.com/fleetwatch/fleetwatch/ui/serve"
)

func TestMain(m *testing.M) { fwtest.MainInMemory(m, cli.Main) }

// key is a client's key pair and its authorized_keys line.
type key struct {
	signer gossh.Signer
	line   string // "<options> ssh-ed25519 AAAA... comment"
	priv   []byte // OpenSSH private-key PEM, for the ssh command
}

func newKey(t testing.TB, options, comment string) key {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, _ := gossh.NewPublicKey(pub)
	line := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(sshPub)))
	if comment != "" {
		line += " " + comment
	}
	if options != "" {
		line = options + " " + line
	}
	block, err := gossh.MarshalPrivateKey(priv, comment)
	if err != nil {
		t.Fatal(err)
	}
	return key{signer: signer, line: line, priv: pem.EncodeToMemory(block)}
}

func (k key) fingerprint() string { return gossh.FingerprintSHA256(k.signer.PublicKey()) }

func writeKeys(t testing.TB, path string, keys ...key) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# the team's keys\n\n")
	for _, k := range keys {
		b.WriteString(k.line + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// server is a serve.Run on 127.0.0.1:0 for one test.
type server struct {
	addr string
	opt  serve.Options
	done chan error
	stop context.CancelFunc
	log  *syncBuf
}

// startServer starts serve.Run; each set changes its options first.
func startServer(t testing.TB, dir string, ops, viewers []key, set ...func(*serve.Options)) *server {
	t.Helper()
	keysDir := t.TempDir()
	opt := serve.Options{Root: dir, Listen: "127.0.0.1:0", AuthorizedKeys: filepath.Join(keysDir, "operators"),
		Viewers: filepath.Join(keysDir, "viewers"), Self: fwtest.Exe(t)}
	writeKeys(t, opt.AuthorizedKeys, ops...)
	writeKeys(t, opt.Viewers, viewers...)
	for _, f := range set {
		f(&opt)
	}
	s := &server{opt: opt, done: make(chan error, 1), log: &syncBuf{}}
	opt.Log = s.log
	ready := make(chan string, 1)
	opt.Ready = func(addr string) { ready <- addr }
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	go func() { s.done <- serve.Run(ctx, opt) }()
	select {
	case s.addr = <-ready:
	case err := <-s.done:
		t.Fatalf("serve.Run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not start in 10s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("serve.Run returned %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("serve.Run did not return 5s after its context ended")
		}
	})
	return s
}

func (s *server) dial(t testing.TB, keys ...key) (*gossh.Client, error) {
	t.Helper()
	signers := make([]gossh.Signer, len(keys))
	for i, k := range keys {
		signers[i] = k.signer
	}
	cfg := &gossh.ClientConfig{User: "anyone", Auth: []gossh.AuthMethod{gossh.PublicKeys(signers...)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second}
	return gossh.Dial("tcp", s.addr, cfg)
}

// syncBuf is a buffer written by one goroutine and read by another.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// containsSince reports whether want is in what was written after the
// first from bytes, without copying the buffer (the benchmark's waiters
// must cost the process little).
func (b *syncBuf) containsSince(from int, want string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	data := b.b.Bytes()
	return bytes.Contains(data[min(from, len(data)):], []byte(want))
}

func (b *syncBuf) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Len()
}

// term is one interactive session: a PTY, the program's output kept, keys
// sent through its stdin.
type term struct {
	t    testing.TB
	c    *gossh.Client
	sess *gossh.Session
	in   io.WriteCloser
	out  *syncBuf
}

// answering keeps what the server sends and answers its colour query as a
// terminal with a black background would, so a session starts at once.
type answering struct {
	tm       *term
	answered atomic.Bool
}

func (a *answering) Write(p []byte) (int, error) {
	n, err := a.tm.out.Write(p)
	if !a.answered.Load() && a.tm.out.containsSince(0, "\x1b[c") && a.answered.CompareAndSwap(false, true) {
		go io.WriteString(a.tm.in, "\x1b]11;rgb:0000/0000/0000\x07\x1b[?62c")
	}
	return n, err
}

func (s *server) openTerm(t testing.TB, cols, rows int, k key) *term {
	t.Helper()
	c, err := s.dial(t, k)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, c: c, sess: sess, out: &syncBuf{}}
	if tm.in, err = sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	sess.Stdout = &answering{tm: tm}
	sess.Stderr = tm.out
	if err := sess.RequestPty("xterm-256color", rows, cols, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	return tm
}

// text is everything the session was sent, escape sequences removed.
func (tm *term) text() string { return ansi.Strip(tm.out.String()) }

// since is the text sent after the first n bytes.
func (tm *term) since(n int) string {
	s := tm.out.String()
	if n > len(s) {
		n = len(s)
	}
	return ansi.Strip(s[n:])
}

func (tm *term) waitFor(limit time.Duration, from int, wants ...string) {
	tm.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		got := tm.since(from)
		missing := ""
		for _, w := range wants {
			if !strings.Contains(got, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("after %v the screen does not show %q; it shows:\n%s\nraw: %q", limit, missing, lastChars(got, 30000), lastChars(tm.out.String(), 300))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (tm *term) send(keys string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.in, keys); err != nil {
		tm.t.Fatalf("sending %q: %v", keys, err)
	}
}

func lastChars(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func events(t testing.TB, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".plans", "logs", "events.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

var _ = fmt.Sprintf
