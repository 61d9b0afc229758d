package uitest

// Notices that reach a person: the cockpit, in tmux, writes the terminal's
// own notification (OSC 777, wrapped for tmux's passthrough) into its pane,
// where pipe-pane sees the raw bytes, and posts to a webhook on loopback;
// a `notify watch` running beside it sends nothing twice.

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

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

func TestTmuxNoticeReachesTerminalAndWebhookOnce(t *testing.T) {
	t.Parallel()
	needTmux(t)
	var mu sync.Mutex
	var ids []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ ID string }
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &body)
		mu.Lock()
		ids = append(ids, body.ID)
		mu.Unlock()
	}))
	defer srv.Close()
	received := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), ids...) }

	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "in-progress/ship-it.md", Fields: "Priority: P1"}, fwtest.Plan{Rel: "features/later.md"})
	settings := "notify:\n  terminal: {osc: [777]}\n  webhooks:\n    - {name: team, url: " + srv.URL + "}\n"
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_CONFIG_HOME=" + t.TempDir()}
	raw := filepath.Join(t.TempDir(), "pane.raw")
	tt := startTmux(t, 100, 30, dir, env)
	if out, err := tt.tmux("pipe-pane", "-o", "-t", "fw", "cat >> "+raw); err != nil {
		t.Fatalf("pipe-pane: %v: %s", err, out)
	}
	tt.waitShows(tmuxStartWait, `\[1 Plans\]`, `2 plans`)

	// A watcher beside the cockpit: whichever looks first sends.
	watch := fwtest.Cmd(dir, env, "notify", "watch", "--every", "1s")
	var werr testkit.LockedBuffer
	watch.Stderr = &werr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = watch.Process.Signal(syscall.SIGTERM); _ = watch.Wait() }()
	fwtest.WaitFor(t, "notify watch to start", tmuxStartWait, func() bool { return strings.Contains(werr.String(), "sending ") })

	fwtest.Want(t, fwtest.Run(t, dir, "complete", "in-progress/ship-it.md", "--to", "review-needed", "--force"), fwtest.ExitOK)
	tt.waitShows(tmuxLiveRefresh, `⚑ 1`)
	// Inside tmux: DCS tmux; with every ESC of the OSC doubled, then ST.
	want := "\x1bPtmux;\x1b\x1b]777;notify;fleetwatch · " + filepath.Base(dir) + ";ship-it waits for review: "
	fwtest.WaitFor(t, "OSC 777 in the pane's output", tmuxWait, func() bool {
		data, _ := os.ReadFile(raw)
		return strings.Contains(string(data), want)
	})
	fwtest.WaitFor(t, "the webhook", tmuxWait, func() bool { return len(received()) > 0 })
	time.Sleep(2500 * time.Millisecond) // two more looks of the watcher, and the cockpit's
	if got := received(); len(got) != 1 || got[0] != "review:review-needed/ship-it.md" {
		t.Errorf("webhook got %v, want the review once", got)
	}
	data, _ := os.ReadFile(raw)
	if n := strings.Count(string(data), "]777;notify;"); n != 1 {
		t.Errorf("%d terminal notifications, want 1", n)
	}
	tt.keys("q")
	if code := tt.waitExit(); code != fwtest.ExitOK {
		t.Fatalf("exit %d after q", code)
	}
}
