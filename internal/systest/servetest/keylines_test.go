package servetest

// One key on several authorized_keys lines: each line's from=, restrict
// and command= bind to what that line grants.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// One key, an operators line for api only from 10.0.0.0/8 and a viewers
// line for web: from 127.0.0.1 the api line is not used, so the key is
// web's viewer and nothing on api (the old code let the viewers line's
// options stand for the key, and from 127.0.0.1 it was api's operator).
func TestFromBindsToItsLine(t *testing.T) {
	base, roots := projects(t)
	k := newKey(t, "carol@office")
	ops, views := keyFiles(t, `from="10.0.0.0/8",projects="api" `+k.line+"\n", `projects="web" `+k.line+"\n")
	port := startServeLines(t, base, roots, ops, views)
	out, exited, err := ssh(t, k, port, "127.0.0.1", "board", "--json")
	if err != nil || !exited {
		t.Fatalf("ssh board --json: %v (exited %v):\n%s", err, exited, out)
	}
	var doc struct {
		Projects []struct{ Name, Role string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("board --json: %v:\n%s", err, out)
	}
	if got := fmt.Sprint(doc.Projects); got != "[{web viewer}]" {
		t.Errorf("from 127.0.0.1 the key sees %s, want only web as a viewer ([{web viewer}])", got)
	}
}

// One key, an operators line for api that forces the board (with
// restrict, or without: command= alone) and a viewers line for web: a
// session uses both lines, so `ssh -tt` never opens the cockpit. Under
// restrict the terminal is refused (OpenSSH's client, having asked for one
// with -tt, gives up); under command= alone it gets each project's board
// as text on its terminal. The old code took the viewers line's options for
// the key and opened the cockpit, api's operator.
func TestForcedBoardBindsToItsLine(t *testing.T) {
	base, roots := projects(t)
	for _, c := range []struct{ opts, want string }{
		{`restrict,command="board"`, "PTY allocation request failed"},
		{`command="board"`, "== api =="},
	} {
		t.Run(c.opts, func(t *testing.T) {
			k := newKey(t, "dave@ci")
			ops, views := keyFiles(t, c.opts+`,projects="api" `+k.line+"\n", `projects="web" `+k.line+"\n")
			port := startServeLines(t, base, roots, ops, views)
			out, exited, err := ssh(t, k, port, "-tt", "127.0.0.1")
			if !exited || strings.Contains(out, "\x1b[?1049h") {
				t.Fatalf("ssh -tt opened the cockpit (exited by itself: %v):\n%q", exited, tail(out))
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("ssh -tt: %v, want %q:\n%s", err, c.want, out)
			}
			if c.want == "== api ==" && (err != nil || !strings.Contains(out, "fix-api") || !strings.Contains(out, "== web ==")) {
				t.Errorf("ssh -tt: %v, want both boards as text:\n%s", err, out)
			}
		})
	}
}

// Two lines of one key forcing different commands: serve refuses to
// start, exit 2, one line naming both lines.
func TestTwoCommandsRefused(t *testing.T) {
	base, roots := projects(t)
	k := newKey(t, "erin@ci")
	ops, views := keyFiles(t, "# ci\n"+`command="board" `+k.line+"\n", `command="board --json" `+k.line+"\n")
	cmd := fwtest.Cmd(base, nil, "serve", "--root", roots[0], "--listen", "127.0.0.1:0", "--authorized-keys", ops, "--viewers", views)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("serve took the two commands and listened")
	}
	got := strings.TrimSpace(stderr.String())
	want := views + ":1: command=\"board --json\", but this key's line at " + ops + ":2 forces command=\"board\""
	if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(got, want) || strings.Contains(got, "\n") {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", cmd.ProcessState.ExitCode(), got, want)
	}
}

// projects scaffolds two projects, api and web, a plan in each.
func projects(t *testing.T) (base string, roots []string) {
	t.Helper()
	base = t.TempDir()
	for _, n := range []string{"api", "web"} {
		dir := filepath.Join(base, n)
		if r := fwtest.Run(t, base, "scaffold", dir); r.Code != 0 {
			t.Fatalf("scaffold: %v", r)
		}
		fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "bugs/fix-" + n + ".md", Fields: "Preferred models: mid"}, time.Hour)
		roots = append(roots, dir)
	}
	return base, roots
}

// keyFiles writes the operators' and viewers' files.
func keyFiles(t *testing.T, ops, views string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	o, v := filepath.Join(dir, "operators"), filepath.Join(dir, "viewers")
	if err := os.WriteFile(o, []byte(ops), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v, []byte(views), 0o600); err != nil {
		t.Fatal(err)
	}
	return o, v
}

// startServeLines runs `fleetwatch serve` over api and web on 127.0.0.1:0 with
// these key files and returns the port it listens on.
func startServeLines(t *testing.T, base string, roots []string, ops, views string) string {
	t.Helper()
	_, a := serve(t, base, "--root", roots[0], "--root", roots[1], "--authorized-keys", ops, "--viewers", views)
	_, port, _ := net.SplitHostPort(a)
	return port
}

// ssh runs the OpenSSH client with k against 127.0.0.1:port, no user
// config and no known_hosts, its stdin held open, for at most 15 s. It
// returns what the client printed (stdout then stderr) and whether it
// exited by itself.
func ssh(t *testing.T, k key, port string, args ...string) (out string, exited bool, err error) {
	t.Helper()
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skipf("the OpenSSH client is not installed (.ci/run installs it): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	argv := append([]string{"-F", "/dev/null", "-i", k.privKey, "-p", port, "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
		"-o", "LogLevel=ERROR"}, args...)
	cmd := exec.CommandContext(ctx, "ssh", argv...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "TERM=xterm-256color")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Held open: a session must end on the server's word, not on our EOF.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	err = cmd.Run()
	return stdout.String() + stderr.String(), ctx.Err() == nil, err
}
