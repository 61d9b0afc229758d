package firsthour4test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// hook is a webhook receiver on loopback: the notice IDs it got.
type hook struct {
	srv *httptest.Server
	mu  sync.Mutex
	ids []string
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(data, &body)
		h.mu.Lock()
		h.ids = append(h.ids, body.ID)
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ids...)
}

// A running notify watch (the cockpit sends through the same notifier)
// follows fleetwatch.yaml: its notify: section changed to another webhook,
// the next notice goes to the new one, with no restart.
func TestARunningSenderFollowsNewSettings(t *testing.T) {
	t.Parallel()
	before, after := newHook(t), newHook(t)
	dir := fwtest.GitProject(t)
	e := []string{"XDG_CONFIG_HOME=" + t.TempDir()}
	writeFile(t, dir, "fleetwatch.yaml", "notify:\n  webhooks:\n    - {name: before, url: "+before.srv.URL+", kinds: [review]}\n")
	cmd := fwtest.Cmd(dir, e, "notify", "watch", "--every", "1s")
	stderr := &testkit.LockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); <-done })
	fwtest.WaitFor(t, "notify watch to start", 30*time.Second, func() bool { return len(stderr.String()) > 0 })
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/a.md"}, 0)
	fwtest.WaitFor(t, "the first notice", 20*time.Second, func() bool { return len(before.got()) == 1 })
	writeFile(t, dir, "fleetwatch.yaml", "notify:\n  webhooks:\n    - {name: after, url: "+after.srv.URL+", kinds: [review]}\n")
	// The settings are read again every two seconds.
	time.Sleep(3 * time.Second)
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/b.md"}, 0)
	fwtest.WaitFor(t, "a notice at the new webhook", 20*time.Second, func() bool { return len(after.got()) > 0 })
	if got := before.got(); len(got) != 1 || got[0] != "review:review-needed/a.md" {
		t.Errorf("the old webhook got %v", got)
	}
	// The new webhook is a target of its own: what is true now is news to it.
	for _, id := range after.got() {
		if id != "review:review-needed/a.md" && id != "review:review-needed/b.md" {
			t.Errorf("the new webhook got %q", id)
		}
	}
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("notify watch did not stop on SIGTERM")
	}
}
