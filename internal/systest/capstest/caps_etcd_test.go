//go:build etcd

package capstest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestCapHoldsOverEtcd: 16 workers, 8 on each of two clones, claim
// through one embedded etcd under `limits: {tier: {reasoner: 3}}`: never
// more than 3 agents run at once, and every plan ends in review-needed
// on the remote's main, no lease left in etcd.
func TestCapHoldsOverEtcd(t *testing.T) {
	if endpoint == "" {
		t.Skip(skipReason)
	}
	const n, cap = 6, 3
	f := remotetest.NewFleet(t, remotetest.Plans(n)...)
	running := runningDir(t)
	id := fmt.Sprintf("caps-%d", time.Now().UnixNano())
	var dirs []string
	for range 2 {
		dir := f.Clone(t, f.Bare)
		write(t, dir, "fleetwatch.yaml", "claims:\n  backend: etcd\n  remote: origin\n  project: "+id+"\n  endpoints: ["+endpoint+"]\n"+
			"limits: {tier: {reasoner: 3}}\nsandbox: off\n")
		endpoints(t, dir, running, true)
		dirs = append(dirs, dir)
	}
	tl := race(t, dirs, time.Now().Add(40*time.Second))
	tl.drain(t, dirs[0], n)
	tl.check(t, running, cap)
	out := fwtest.GitOut(t, f.Bare, "ls-tree", "-r", "--name-only", "main", ".plans/")
	for i := range n {
		if !strings.Contains(out, fmt.Sprintf(".plans/review-needed/p%03d.md", i)) {
			t.Errorf("p%03d is not in review-needed on the remote's main:\n%s", i, out)
		}
	}
	r := fwtest.Run(t, dirs[1], "work-once", "--root", dirs[1], "--agent-id", "lister", "--endpoint", "claude", "--list", "--json")
	if r.Code != 0 || strings.Contains(r.Stdout, `"lease":{`) {
		t.Errorf("leases left in etcd: %v", r)
	}
}
