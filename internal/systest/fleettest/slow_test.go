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
// due every 3 s, runs its agent for 7 s and completes its plan.
func TestSlowRecordPublishKeepsTheLease(t *testing.T) {
	f := remotetest.NewFleet(t, remotetest.Plans(1)...)
	a := f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, a)
	hook := "#!/bin/sh\nwhile read old new ref; do\n\tcase $ref in refs/fleetwatch/workers/*) sleep 8;; esac\ndone\nexit 0\n"
	if err := os.WriteFile(filepath.Join(f.Bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	fwtest.WithExecutor(t, a, fwtest.FakeAgent(t), "-sleep", "7s", "-lines", "30", "-every", "200ms", "-commit")
	start := time.Now()
	r := fwtest.RunEnv(t, a, []string{"FLEET_HOST=host-a"}, "work-once", "--root", a, "--agent-id", "wa", "--run", "--once", "--lease-ttl", "9")
	if r.Code != 0 || strings.Contains(r.Stderr, "lease lost") {
		log, _ := os.ReadFile(filepath.Join(a, "var", "fleet", "logs", "wa.log"))
		t.Fatalf("a slow record publish cost the lease (%v): %v\nits log:\n%s", time.Since(start).Round(time.Second), r, log)
	}
	t.Logf("done in %v", time.Since(start).Round(time.Second))
}
