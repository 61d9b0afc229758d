// Package notifytest runs the notifier as an operator does: `notify test`,
// `notify log` and `notify watch` as real processes, several at once over
// one project, sending to a real HTTP server on loopback.
package notifytest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/overlap"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) {
	overlap.Default(4)
	fwtest.Main(m, cli.Main)
}

// hook is a webhook receiver on loopback: every body, and the answers it
// gives (then 200).
type hook struct {
	srv     *httptest.Server
	mu      sync.Mutex
	bodies  []map[string]any
	answers []int
}

func newHook(t *testing.T, answers ...int) *hook {
	h := &hook{answers: answers}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(data, &body)
		h.mu.Lock()
		h.bodies = append(h.bodies, body)
		code := 200
		if len(h.answers) > 0 {
			code, h.answers = h.answers[0], h.answers[1:]
		}
		h.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// ids are the notice IDs received (format: json), in order.
func (h *hook) ids() []string { return h.field("id") }

// texts are the bodies' "text" (format: slack), in order.
func (h *hook) texts() []string { return h.field("text") }

func (h *hook) field(name string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, b := range h.bodies {
		v, _ := b[name].(string)
		out = append(out, v)
	}
	return out
}

// env keeps the tester's own ~/.config/fleetwatch out.
func env(t *testing.T) []string { return []string{"XDG_CONFIG_HOME=" + t.TempDir()} }

func writeSettings(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNotifyTestSaysPerTarget(t *testing.T) {
	t.Parallel()
	ok, bad := newHook(t), newHook(t, 404)
	dir := fwtest.NewTree(t)
	e := env(t)
	fwtest.OneLineError(t, fwtest.RunEnv(t, dir, e, "notify", "test"), "no notify: targets")
	writeSettings(t, dir, "notify:\n  webhooks:\n    - {name: ok, url: "+ok.srv.URL+"}\n    - name: bad\n      url: "+bad.srv.URL+"\n      format: slack\n")
	r := fwtest.RunEnv(t, dir, e, "notify", "test", "--to", "ok")
	fwtest.Want(t, r, fwtest.ExitOK)
	if r.Stdout != "ok: sent (1 try)\n" || len(ok.ids()) != 1 || !strings.HasPrefix(ok.ids()[0], "test:") {
		t.Errorf("--to ok: %v; received %v", r, ok.ids())
	}
	r = fwtest.RunEnv(t, dir, e, "notify", "test")
	if r.Code != fwtest.ExitError || r.Stdout != "ok: sent (1 try)\nbad: not sent: HTTP 404\n" {
		t.Errorf("both: %v", r)
	}
	fwtest.OneLineError(t, fwtest.RunEnv(t, dir, e, "notify", "test", "--to", "nope"), `no such target "nope"`, "ok bad")
	r = fwtest.RunEnv(t, dir, e, "notify", "log")
	fwtest.Want(t, r, fwtest.ExitOK)
	if lines := strings.Split(strings.TrimSpace(r.Stdout), "\n"); len(lines) != 3 || !strings.HasSuffix(lines[0], "→ sent (1 try)") ||
		!strings.Contains(lines[2], "  bad  test  ") || !strings.HasSuffix(lines[2], "→ failed: HTTP 404") {
		t.Errorf("notify log:\n%s", r.Stdout)
	}
	// A bad setting is one line naming the file and its line.
	writeSettings(t, dir, "notify:\n  webhooks:\n    - url: gopher://x\n")
	fwtest.OneLineError(t, fwtest.RunEnv(t, dir, e, "notify", "test"), "fleetwatch.yaml:3: notify: webhook: url: want an http or https URL")
	fwtest.OneLineError(t, fwtest.RunEnv(t, dir, e, "notify", "watch"), "fleetwatch.yaml:3:")
}

// watcher is a running `notify watch`.
type watcher struct {
	t      *testing.T
	stderr *testkit.LockedBuffer
	done   chan int
	pid    int
}

func startWatch(t *testing.T, dir string, e []string) *watcher {
	cmd := fwtest.Cmd(dir, e, "notify", "watch", "--every", "1s")
	w := &watcher{t: t, stderr: &testkit.LockedBuffer{}, done: make(chan int, 1)}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.pid = cmd.Process.Pid
	go func() { _ = cmd.Wait(); w.done <- cmd.ProcessState.ExitCode() }()
	t.Cleanup(func() { _ = syscall.Kill(w.pid, syscall.SIGKILL) })
	fwtest.WaitFor(t, "notify watch to start", 30*time.Second, func() bool { return strings.Contains(w.stderr.String(), "sending ") })
	return w
}

// stop sends SIGTERM and wants exit 0.
func (w *watcher) stop() {
	w.t.Helper()
	_ = syscall.Kill(w.pid, syscall.SIGTERM)
	select {
	case code := <-w.done:
		if code != 0 {
			w.t.Errorf("notify watch exited %d: %s", code, w.stderr.String())
		}
	case <-time.After(20 * time.Second):
		w.t.Fatalf("notify watch did not stop on SIGTERM")
	}
}

// Two watchers over one project send each notice once between them; a
// restart sends nothing again; a new fact is sent once.
func TestTwoWatchersAndARestartSendOnce(t *testing.T) {
	t.Parallel()
	h := newHook(t)
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "in-progress/a.md"}, fwtest.Plan{Rel: "in-progress/b.md"}, fwtest.Plan{Rel: "in-progress/c.md"})
	writeSettings(t, dir, "notify:\n  webhooks:\n    - {name: team, url: "+h.srv.URL+", per_minute: 100, kinds: [review]}\n")
	e := env(t)
	w1, w2 := startWatch(t, dir, e), startWatch(t, dir, e)
	for _, p := range []string{"a", "b", "c"} {
		fwtest.Want(t, fwtest.Run(t, dir, "complete", "in-progress/"+p+".md", "--to", "review-needed", "--force"), fwtest.ExitOK)
	}
	want := []string{"review:review-needed/a.md", "review:review-needed/b.md", "review:review-needed/c.md"}
	fwtest.WaitFor(t, "three notices", 20*time.Second, func() bool { return len(h.ids()) >= 3 })
	// Both watchers look again at least every second: give them two.
	time.Sleep(2500 * time.Millisecond)
	got := h.ids()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("received %v, want each of %v once", got, want)
	}
	w1.stop()
	w2.stop()
	w3 := startWatch(t, dir, e)
	time.Sleep(2500 * time.Millisecond)
	if n := len(h.ids()); n != 3 {
		t.Fatalf("a restarted watcher sent again: %v", h.ids())
	}
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/d.md"}, 0)
	fwtest.WaitFor(t, "the new notice", 20*time.Second, func() bool { return len(h.ids()) == 4 })
	if id := h.ids()[3]; id != "review:review-needed/d.md" {
		t.Errorf("new notice %q", id)
	}
	w3.stop()
}

// fleetwatch serve sends the project's notices with no session open, and
// stops cleanly on SIGTERM.
func TestServeSendsWithNoSessionOpen(t *testing.T) {
	t.Parallel()
	h := newHook(t)
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "in-progress/a.md"})
	writeSettings(t, dir, "notify:\n  webhooks:\n    - {url: "+h.srv.URL+"}\n")
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := fwtest.Cmd(dir, env(t), "serve", "--listen", "127.0.0.1:0", "--authorized-keys", keys)
	var out, errb testkit.LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	fwtest.WaitFor(t, "serve to listen", 30*time.Second, func() bool { return strings.Contains(out.String(), "listening on") })
	fwtest.Want(t, fwtest.Run(t, dir, "complete", "in-progress/a.md", "--to", "review-needed", "--force"), fwtest.ExitOK)
	fwtest.WaitFor(t, "the review notice", 20*time.Second, func() bool { return len(h.ids()) == 1 })
	if id := h.ids()[0]; id != "review:review-needed/a.md" {
		t.Errorf("sent %q", id)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve on SIGTERM: %v: %s", err, errb.String())
	}
}

// TestWatchersOnTwoMachinesPostOnce: two clones of one remote stand for
// two machines, each with its own var/ (its own record) and a watcher
// posting to the same webhook: each notice reaches the hook once, claimed
// through the git remote, and the machine that lost says so in its log.
func TestWatchersOnTwoMachinesPostOnce(t *testing.T) {
	t.Parallel()
	h := newHook(t)
	f := remotetest.NewFleet(t, fwtest.Plan{Rel: "review-needed/a.md"}, fwtest.Plan{Rel: "review-needed/b.md"})
	settings := "claims: {backend: git, remote: origin}\nnotify:\n  webhooks:\n    - {name: team, url: " + h.srv.URL + ", per_minute: 100, kinds: [review]}\n"
	var dirs []string
	var ws []*watcher
	for _, host := range []string{"host-a", "host-b"} {
		dir := f.Clone(t, f.Bare)
		writeSettings(t, dir, settings)
		dirs = append(dirs, dir)
		ws = append(ws, startWatch(t, dir, append(env(t), "FLEET_HOST="+host)))
	}
	fwtest.WaitFor(t, "two notices", 30*time.Second, func() bool { return len(h.ids()) >= 2 })
	time.Sleep(2500 * time.Millisecond) // both watchers look again meanwhile
	got := h.ids()
	slices.Sort(got)
	if want := []string{"review:review-needed/a.md", "review:review-needed/b.md"}; !slices.Equal(got, want) {
		t.Fatalf("received %v, want each of %v once across the two machines", got, want)
	}
	for _, w := range ws {
		w.stop()
	}
	var logs string
	for _, dir := range dirs {
		r := fwtest.RunEnv(t, dir, env(t), "notify", "log")
		fwtest.Want(t, r, fwtest.ExitOK)
		logs += r.Stdout
	}
	if sent, elsewhere := strings.Count(logs, "→ sent ("), strings.Count(logs, "→ elsewhere: sent from another machine"); sent != 2 || elsewhere != 2 {
		t.Errorf("the two machines' logs say %d sent and %d sent elsewhere, want 2 and 2:\n%s", sent, elsewhere, logs)
	}
}
