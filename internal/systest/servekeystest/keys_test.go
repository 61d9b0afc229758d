package servekeystest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"fleetwatch/internal/testkit/fwtest"
)

// One key, an operators line for api only from 10.0.0.0/8 and a viewers
// line for web: from 127.0.0.1 the api line is not used, so the key is
// web's viewer and nothing on api (the old code let the viewers line's
// options stand for the key, and from 127.0.0.1 it was api's operator).
func TestFromBindsToItsLine(t *testing.T) {
	base, roots := projects(t)
	k := newKey(t, "carol@office")
	ops, views := keyFiles(t, `from="10.0.0.0/8",projects="api" `+k.line+"\n", `projects="web" `+k.line+"\n")
	port := startServe(t, base, roots, ops, views)
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
			port := startServe(t, base, roots, ops, views)
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

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}
