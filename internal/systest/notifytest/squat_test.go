package notifytest

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// ledgerKey is a notice's key in the shared ledger as anyone who read
// fleetwatch.yaml can work it out (docs/notify.md): the hook's URL and the
// notice's ID, hashed.
func ledgerKey(hook, id string) string {
	sum := sha256.Sum256([]byte(hook + "\n" + id))
	return hex.EncodeToString(sum[:20])
}

// TestSquattedClaimDelaysButNeverSilences: two clones of one remote stand
// for two machines, each with a watcher posting to one hook. A third
// party with push access pre-creates the claim ref of a's notice: it is
// still posted, once, after the wait for a confirmation that never comes.
// b's notice, claimed and confirmed by whichever machine posted it, is
// posted once: the other machine waits for the confirmation and records
// it sent elsewhere.
func TestSquattedClaimDelaysButNeverSilences(t *testing.T) {
	t.Parallel()
	h := newHook(t)
	f := remotetest.NewFleet(t, fwtest.Plan{Rel: "review-needed/a.md"}, fwtest.Plan{Rel: "review-needed/b.md"})
	squat := "refs/fleetwatch/notices/" + ledgerKey(h.srv.URL, "review:review-needed/a.md")
	head := strings.TrimSpace(testkit.Git(t, f.Bare, "rev-parse", "HEAD"))
	testkit.Git(t, f.Bare, "update-ref", squat, head)

	settings := "claims: {backend: git, remote: origin}\nnotify:\n  webhooks:\n    - {name: team, url: " + h.srv.URL + ", per_minute: 100, kinds: [review]}\n"
	var dirs []string
	var ws []*watcher
	for _, host := range []string{"host-a", "host-b"} {
		dir := f.Clone(t, f.Bare)
		writeSettings(t, dir, settings)
		dirs = append(dirs, dir)
		ws = append(ws, startWatch(t, dir, append(env(t), "FLEET_HOST="+host)))
	}
	began := time.Now()
	// 5 s of wait for the squatter's confirmation, git round trips and
	// the watchers' looks on top.
	fwtest.WaitFor(t, "both notices, the squatted one too", 20*time.Second, func() bool { return len(h.ids()) >= 2 })
	took := time.Since(began)
	// Each machine logs one outcome per notice once it has settled it
	// (posted, or seen it confirmed from elsewhere): a machine that would
	// post again has done so by the time all four are logged.
	fwtest.WaitFor(t, "both machines to settle both notices", 20*time.Second, func() bool {
		sent, elsewhere := outcomes(t, dirs)
		return sent+elsewhere >= 4
	})
	got := h.ids()
	slices.Sort(got)
	if want := []string{"review:review-needed/a.md", "review:review-needed/b.md"}; !slices.Equal(got, want) {
		t.Fatalf("received %v, want each of %v once across the two machines", got, want)
	}
	t.Logf("the squatted notice reached the hook %v after the watchers started", took.Round(100*time.Millisecond))
	for _, w := range ws {
		w.stop()
	}
	if sent, elsewhere := outcomes(t, dirs); sent != 2 || elsewhere != 2 {
		t.Errorf("the two machines' logs say %d sent and %d sent elsewhere, want 2 and 2:\n%s", sent, elsewhere, notifyLogs(t, dirs))
	}
	if refs := testkit.Git(t, f.Bare, "for-each-ref", "--format=%(refname)", "refs/fleetwatch/notices-sent/"); len(strings.Fields(refs)) != 2 {
		t.Errorf("confirmations on the remote:\n%s", refs)
	}
}

// notifyLogs is the machines' `notify log`s, one after the other.
func notifyLogs(t *testing.T, dirs []string) string {
	t.Helper()
	var logs string
	for _, dir := range dirs {
		r := fwtest.RunEnv(t, dir, env(t), "notify", "log")
		fwtest.Want(t, r, fwtest.ExitOK)
		logs += r.Stdout
	}
	return logs
}

// outcomes counts the notices the machines' logs say were sent, and sent
// from another machine.
func outcomes(t *testing.T, dirs []string) (sent, elsewhere int) {
	t.Helper()
	logs := notifyLogs(t, dirs)
	return strings.Count(logs, "→ sent ("), strings.Count(logs, "→ elsewhere: sent from another machine")
}
