package serve_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/serve"
)

// When Run's context ends, every session shows the stopping line, Run
// returns nil and the sessions' PTYs are closed.
func TestStopTellsSessions(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	tm := s.openTerm(t, 100, 30, alice)
	tm.waitFor(10*time.Second, 0, "crash")
	start := time.Now()
	s.stop()
	select {
	case err := <-s.done:
		s.done <- err
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return within 2s")
	}
	t.Logf("Run returned after %v", time.Since(start))
	waitPTYs(t, 0, time.Second)
	tm.sess.Wait()
	if !strings.Contains(tm.text(), serve.StopReason) {
		t.Errorf("the session did not show %q:\n%q", serve.StopReason, lastChars(tm.out.String(), 1500))
	}
}
