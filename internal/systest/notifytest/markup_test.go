// The notifier against what an agent or a clone with push access can
// write: a plan title holding chat markup, a notice claim squatted on the
// shared remote.

package notifytest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// payload is what an agent writes into a plan's title to ping a whole
// channel and dress a phishing link as a button.
const payload = "<!channel> <https://evil.example/login|Approve here>"

// TestSlackMarkupInATitleIsInert: a plan waiting for review whose title
// holds Slack markup reaches a format: slack hook escaped, so Slack shows
// the title as text: no channel ping, no disguised link.
func TestSlackMarkupInATitleIsInert(t *testing.T) {
	t.Parallel()
	h := newHook(t)
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "review-needed/a.md"})
	path := filepath.Join(dir, ".plans", "review-needed", "a.md")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(text), "\n")
	if err := os.WriteFile(path, []byte("# Plan: "+payload+"\n"+rest), 0o644); err != nil {
		t.Fatal(err)
	}
	writeSettings(t, dir, "notify:\n  webhooks:\n    - {name: team, url: "+h.srv.URL+", format: slack, kinds: [review]}\n")
	w := startWatch(t, dir, env(t))
	fwtest.WaitFor(t, "the review notice", 20*time.Second, func() bool { return len(h.texts()) == 1 })
	w.stop()
	got := h.texts()[0]
	if !strings.Contains(got, "&lt;!channel&gt; &lt;https://evil.example/login|Approve here&gt;") {
		t.Errorf("the title is not escaped for Slack: %q", got)
	}
	if strings.ContainsAny(got, "<>") {
		t.Errorf("live Slack markup posted: %q", got)
	}
}
