package serve_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// An operator's key promotes a draft through the PTY: the file moves and
// the event log names the key's comment and fingerprint.
func TestOperatorPromotes(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "drafts/idea.md", Fields: "Value: high; Preferred models: mid"})
	alice := newKey(t, `no-port-forwarding,from="127.0.0.0/8"`, "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	t.Cleanup(func() { t.Logf("server log:\n%s", s.log) })
	tm := s.openTerm(t, 100, 30, alice)
	// It opens on the first lane that holds plans: drafts.
	tm.waitFor(10*time.Second, 0, "1 plan", "drafts", "idea")
	n := tm.out.Len()
	tm.send("p")
	tm.waitFor(5*time.Second, n, "Promote idea")
	tm.send("\r")
	fwtest.WaitFor(t, "features/idea.md on disk", 5*time.Second, func() bool { return fwtest.Exists(dir, "features/idea.md") })
	// The event is logged just after the move.
	tm.waitFor(5*time.Second, n, "promoted idea")
	log := events(t, dir)
	if !strings.Contains(log, `"ssh:alice@laptop"`) || !strings.Contains(log, "ssh "+alice.fingerprint()) {
		t.Errorf("the event log does not name ssh:alice@laptop and %s:\n%s", alice.fingerprint(), log)
	}
}

// A viewer sees the board and the screen says read-only, but promote,
// park, release, recover, spawn and stop change nothing on disk.
func TestViewerActsOnNothing(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"},
		fwtest.Plan{Rel: "drafts/idea.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "in-progress/stale.md", Fields: "Preferred models: mid"})
	if r := fwtest.Run(t, dir, "recover", "stale", "--agent-id", "mid-1"); r.Code != 0 {
		t.Fatalf("recover: %v", r)
	}
	alice, bob := newKey(t, "", "alice@laptop"), newKey(t, "", "bob@desk")
	// bob is in both files: a viewer.
	s := startServer(t, dir, []key{alice, bob}, []key{bob})
	tm := s.openTerm(t, 120, 30, bob)
	tm.waitFor(10*time.Second, 0, "read-only", "crash")
	before := testkit.StateOf(t, dir)
	for _, keys := range []string{"p", "\r", "a", "\r", "r", "\r", "R", "\r", "s", "\r", "[", "p", "\r", "2", "r", "R", "4", "x", "\r", "1"} {
		tm.send(keys)
		time.Sleep(30 * time.Millisecond)
	}
	n := tm.out.Len()
	tm.send("p")
	tm.waitFor(5*time.Second, n, "read-only")
	time.Sleep(300 * time.Millisecond)
	before.Unchanged(t, dir, "a viewer's keys")
	if got := tm.text(); strings.Contains(got, "p promote") || strings.Contains(got, "s spawn") {
		t.Errorf("a viewer's screen names an action:\n%s", lastChars(got, 4000))
	}
}

// An unknown key is refused; a client offering an unknown key, then a
// known one, gets in with the known one.
func TestUnknownKeyRefused(t *testing.T) {
	dir := fwtest.NewTree(t)
	alice, eve := newKey(t, "", "alice@laptop"), newKey(t, "", "eve")
	s := startServer(t, dir, []key{alice}, nil)
	if c, err := s.dial(t, eve); err == nil {
		c.Close()
		t.Fatal("an unknown key got in")
	} else if !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("the refusal is %v, want an auth error", err)
	}
	c, err := s.dial(t, eve, alice)
	if err != nil {
		t.Fatalf("eve's key then alice's: %v", err)
	}
	c.Close()
}

// A session without a PTY gets the board as text, or as JSON for
// `board --json`, and exit status 0.
func TestNoPTYGetsBoard(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	run := func(cmd string) string {
		c, err := s.dial(t, alice)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		sess, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		out, err := sess.Output(cmd)
		if err != nil {
			t.Fatalf("%q: %v\n%s", cmd, err, out)
		}
		return string(out)
	}
	want := fwtest.Run(t, dir, "board", "--once", "--root", dir, "--width", "100").Stdout
	if got := run(""); got != want || !strings.Contains(got, "crash") {
		t.Errorf("without a PTY the session got:\n%s\nwant board --once's:\n%s", got, want)
	}
	var doc struct {
		Lanes []struct {
			Lane  string
			Count int
		}
	}
	if err := json.Unmarshal([]byte(run("board --json")), &doc); err != nil || len(doc.Lanes) == 0 {
		t.Fatalf("board --json over ssh: %v %+v", err, doc)
	}
}

// Twenty sessions each render, and each follows a change on disk: the new
// plan's slug is on every screen within 2 s.
func TestTwentySessionsFollow(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	terms := make([]*term, 20)
	var wg sync.WaitGroup
	for i := range terms {
		terms[i] = s.openTerm(t, 100, 30, alice)
	}
	for _, tm := range terms {
		tm.waitFor(15*time.Second, 0, "crash")
	}
	marks := make([]int, len(terms))
	for i, tm := range terms {
		marks[i] = tm.out.Len()
	}
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "bugs/zebra.md", Fields: "Priority: P2; Preferred models: mid"}, time.Second)
	start := time.Now()
	for i, tm := range terms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tm.waitFor(2*time.Second+time.Since(start)*0, marks[i], "zebra")
		}()
	}
	wg.Wait()
	t.Logf("all 20 screens show the new plan after %v", time.Since(start))
}

// A window change reflows the screen to the new width.
func TestResizeReflows(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	tm := s.openTerm(t, 80, 24, alice)
	tm.waitFor(10*time.Second, 0, "crash")
	if w := widest(tm.text()); w > 80 {
		t.Fatalf("at 80 columns a line is %d wide", w)
	}
	n := tm.out.Len()
	if err := tm.sess.WindowChange(30, 140); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for widest(tm.since(n)) != 140 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if w := widest(tm.since(n)); w != 140 {
		t.Errorf("after the resize the widest line is %d, want 140:\n%q", w, lastChars(tm.out.String(), 2000))
	}
}

// widest is the widest line of text, in cells.
func widest(text string) int {
	w := 0
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r", "\n"), "\n") {
		w = max(w, len([]rune(l)))
	}
	return w
}

var _ = fmt.Sprint
