package serve_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/serve"
)

// The options of an authorized_keys line are honoured, the client being
// at 127.0.0.1: from= (an address, CIDR, wildcards, negation), no-pty,
// restrict (and restrict,pty), command=.
func TestKeyOptionsHonoured(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	keys := map[string]key{}
	var lines []key
	for _, c := range []struct{ name, opts string }{
		{"here", `from="127.0.0.1"`},
		{"loopback", `from="127.0.0.0/8"`},
		{"glob", `from="10.*,127.0.0.?"`},
		{"office", `from="10.0.0.0/8"`},
		{"negated", `from="!127.0.0.1,*"`},
		{"nopty", `no-pty`},
		{"restrict", `restrict`},
		{"restrictpty", `restrict,pty`},
		{"json", `command="board --json"`},
	} {
		k := newKey(t, c.opts, c.name)
		keys[c.name] = k
		lines = append(lines, k)
	}
	s := startServer(t, dir, lines, nil)
	for _, name := range []string{"here", "loopback", "glob"} {
		c, err := s.dial(t, keys[name])
		if err != nil {
			t.Errorf("%s (%s) is refused from 127.0.0.1: %v", name, keys[name].line[:20], err)
			continue
		}
		c.Close()
	}
	for _, name := range []string{"office", "negated"} {
		if c, err := s.dial(t, keys[name]); err == nil {
			c.Close()
			t.Errorf("%s logs in from 127.0.0.1", name)
		}
	}
	session := func(name string) *gossh.Session {
		c, err := s.dial(t, keys[name])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		sess, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		return sess
	}
	for _, name := range []string{"nopty", "restrict"} {
		sess := session(name)
		if err := sess.RequestPty("xterm", 30, 100, gossh.TerminalModes{}); err == nil {
			t.Errorf("%s got a terminal", name)
		}
		if out, err := sess.Output(""); err != nil || !strings.Contains(string(out), "crash") {
			t.Errorf("%s without a terminal: %v\n%s", name, err, out)
		}
	}
	if err := session("restrictpty").RequestPty("xterm", 30, 100, gossh.TerminalModes{}); err != nil {
		t.Errorf("restrict,pty was refused a terminal: %v", err)
	}
	// command=: whatever the client asks, with or without a terminal.
	for _, pty := range []bool{false, true} {
		sess := session("json")
		if pty {
			if err := sess.RequestPty("xterm", 30, 100, gossh.TerminalModes{}); err != nil {
				t.Fatal(err)
			}
		}
		out, err := sess.Output("board --once")
		var doc struct{ Lanes []json.RawMessage }
		if err != nil || json.Unmarshal(out, &doc) != nil || len(doc.Lanes) == 0 {
			t.Errorf("command=\"board --json\" (pty %v) gave %v:\n%s", pty, err, out)
		}
	}
}

// A line with an option serve does not honour, a cert-authority line, a
// command= that is not one of serve's: serve does not start, and says
// FILE:LINE in one line.
func TestKeyOptionsRefusedAtLoad(t *testing.T) {
	dir := fwtest.NewTree(t)
	for _, c := range []struct{ opts, want string }{
		{`environment="EDITOR=vi"`, `option "environment=\"EDITOR=vi\""`},
		{`cert-authority`, "cert-authority"},
		{`command="/bin/sh"`, "runs no programs"},
		{`from="10.0.0.0/33"`, "not a CIDR block"},
		{`agent-forwarding`, `option "agent-forwarding"`},
	} {
		ops := filepath.Join(t.TempDir(), "operators")
		writeKeys(t, ops, newKey(t, "", "alice"), newKey(t, c.opts, "bob"))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := serve.Run(ctx, serve.Options{Root: dir, Listen: "127.0.0.1:0", AuthorizedKeys: ops,
			Ready: func(string) { t.Errorf("serve started with %s", c.opts) }})
		cancel()
		if err == nil || !strings.HasPrefix(err.Error(), ops+":4: ") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line starting %s:4: and naming %s", c.opts, err, ops, c.want)
		}
	}
}
