package noticetest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fleetwatch/internal/testkit"
	"fleetwatch/internal/testkit/fwtest"
)

// hook is a webhook receiver on loopback: every body, as it came.
type hook struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	at     []time.Time
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(data, &body)
		h.mu.Lock()
		h.bodies = append(h.bodies, body)
		h.at = append(h.at, time.Now())
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// texts are the bodies' "text", in order.
func (h *hook) texts() []string { return h.field("text") }

// ids are the bodies' "id" (format: json), in order.
func (h *hook) ids() []string { return h.field("id") }

func (h *hook) field(name string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, b := range h.bodies {
		s, _ := b[name].(string)
		out = append(out, s)
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
