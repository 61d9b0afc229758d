//go:build !etcd

package fleettest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestSlowRecordPublishKeepsTheLease: a remote that takes 8 s to accept a
// worker record (a pre-receive hook sleeping on refs/fleetwatch/workers/)
// holds up no lease renewal: a worker on a 9 s lease, whose renewals are
// due every 3 s, runs its agent for 7 s (30 lines 200 ms apart, then 1 s)
// and completes its plan. The first two records are slow, back to back
// through the agent's run and four renewals (a renewal that waited on
// them would come past the lease's end); the later ones, sent as the run
// ends, are not, as they would only add 8 s each.
func TestSlowRecordPublishKeepsTheLease(t *testing.T) {
	t.Parallel()
	f := remotetest.NewFleet(t, remotetest.Plans(1)...)
	a := f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, a)
	hook := "#!/bin/sh\nwhile read old new ref; do\n\tcase $ref in refs/fleetwatch/workers/*) { mkdir slow1 || mkdir slow2; } 2>/dev/null && sleep 8;; esac\ndone\nexit 0\n"
	if err := os.WriteFile(filepath.Join(f.Bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	fwtest.WithExecutor(t, a, fwtest.FakeAgent(t), "-sleep", "1s", "-lines", "30", "-every", "200ms", "-commit")
	start := time.Now()
	r := fwtest.RunEnv(t, a, []string{"FLEET_HOST=host-a"}, "work-once", "--root", a, "--agent-id", "wa", "--run", "--once", "--lease-ttl", "9")
	if r.Code != 0 || strings.Contains(r.Stderr, "lease lost") {
		log, _ := os.ReadFile(filepath.Join(a, "var", "fleet", "logs", "wa.log"))
		t.Fatalf("a slow record publish cost the lease (%v): %v\nits log:\n%s", time.Since(start).Round(time.Second), r, log)
	}
	if _, err := os.Stat(filepath.Join(f.Bare, "slow2")); err != nil {
		t.Fatalf("two worker records did not go through the slow hook: %v", err)
	}
	t.Logf("done in %v", time.Since(start).Round(time.Second))
}
