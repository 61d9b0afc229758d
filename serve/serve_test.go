package serve_test

import (
	"strings"
	"testing"
	"time"

	"fleetwatch/internal/testkit/fwtest"
)

// An operator's key promotes a draft through the PTY: the file moves and
// the event log names the key's comment and fingerprint.
func TestOperatorPromotes(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "drafts/idea.md", Fields: "Value: high; Preferred models: mid"})
	alice := newKey(t, `no-port-forwarding,command="/bin/false"`, "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	t.Cleanup(func() { t.Logf("server log:\n%s", s.log) })
	tm := s.openTerm(t, 100, 30, alice)
	tm.waitFor(10*time.Second, 0, "1 plan", "drafts")
	n := tm.out.Len()
	tm.send("[")
	tm.waitFor(5*time.Second, n, "idea")
	n = tm.out.Len()
	tm.send("p")
	tm.waitFor(5*time.Second, n, "Promote idea")
	tm.send("\r")
	fwtest.WaitFor(t, "features/idea.md on disk", 5*time.Second, func() bool { return fwtest.Exists(dir, "features/idea.md") })
	log := events(t, dir)
	if !strings.Contains(log, `"ssh:alice@laptop"`) {
		t.Errorf("the event log does not name ssh:alice@laptop:\n%s", log)
	}
}
