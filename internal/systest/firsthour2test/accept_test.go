package firsthour2test

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// commitOnDev is a person's own commit straight onto dev, checked out.
func commitOnDev(t *testing.T, dir, rel, content string) string {
	t.Helper()
	landkit.Write(t, dir, rel, content)
	testkit.Git(t, dir, "add", rel)
	testkit.Git(t, dir, "commit", "-q", "-m", "my own: "+rel)
	return fwtest.GitOut(t, dir, "rev-parse", "dev")
}

// A person's commit on the integration branch sets off the alarm, which
// says how to accept it; queue accept takes it as theirs: check exits 0
// and nothing warns until the next move nobody explained.
func TestQueueAcceptStopsTheAlarm(t *testing.T) {
	t.Parallel()
	dir := checkedOutDev(t, landkit.PassCheck, false)
	landkit.Feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	landkit.Queued(t, dir, "a")
	mine := commitOnDev(t, dir, "NOTES", "settings and plan moves go here\n")

	r := fwtest.Run(t, dir, "check")
	if r.Code != 1 || !strings.Contains(r.Stdout+r.Stderr, "fleetwatch queue accept") {
		t.Fatalf("check after a commit of one's own on dev: want exit 1 naming queue accept, got %v", r)
	}
	if r := fwtest.RunEnv(t, dir, []string{"FLEET_AGENT_ID=mid-1"}, "queue", "accept"); r.Code != 2 {
		t.Errorf("an agent's run accepted a move: %v", r)
	}
	fwtest.OneLineError(t, fwtest.Run(t, dir, "queue", "accept", "0000000"), "moved again", mine[:7])
	fwtest.OneLineError(t, fwtest.Run(t, dir, "queue", "accept", "HEAD"), "not a commit id", mine[:7])

	r = fwtest.Run(t, dir, "queue", "accept", mine[:7])
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stdout, "accepted dev at "+mine[:12]) {
		t.Errorf("queue accept: %v", r)
	}
	if r := fwtest.Run(t, dir, "check"); r.Code != 0 {
		t.Errorf("check after queue accept: %v", r)
	}
	if r := fwtest.Run(t, dir, "queue", "list"); r.Code != 0 || strings.Contains(r.Stderr, "warning") {
		t.Errorf("queue list after queue accept: %v", r)
	}
	landkit.WantNoNotice(t, dir)
	if r := fwtest.Run(t, dir, "queue", "accept"); r.Code != 1 || !strings.Contains(r.Stderr, "nothing to accept") {
		t.Errorf("a second queue accept: %v", r)
	}
	accepted := 0
	for _, e := range fwtest.EventsOf(t, dir) {
		if e["event"] == "integration-accepted" && e["to"] == mine {
			accepted++
		}
	}
	if accepted != 1 {
		t.Errorf("%d integration-accepted events naming %s", accepted, mine)
	}

	// The landing builds on the accepted tip and warns of nothing.
	r = landkit.Land(t, dir, nil)
	fwtest.Want(t, r, 0)
	if strings.Contains(r.Stderr, "warning") {
		t.Errorf("queue land after queue accept warns: %s", r.Stderr)
	}
	if _, err := landkit.GitCmd(dir, "merge-base", "--is-ancestor", mine, "dev"); err != nil {
		t.Error("the accepted commit is not in dev after the landing")
	}

	// The next move nobody explained is an alarm again.
	commitOnDev(t, dir, "NOTES", "a second edit\n")
	if r := fwtest.Run(t, dir, "check"); r.Code != 1 {
		t.Errorf("check after a second move: %v", r)
	}
}
