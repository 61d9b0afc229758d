package remoteverbtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// remoteFiles is the plans on the remote's main: rel → true.
func remoteFiles(t *testing.T, f *remotetest.Fleet) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, p := range strings.Split(gitIn(t, f.Bare, nil, "ls-tree", "-r", "--name-only", "main", "--", ".plans/"), "\n") {
		out[strings.TrimPrefix(p, ".plans/")] = true
	}
	return out
}

func commits(t *testing.T, f *remotetest.Fleet) int {
	t.Helper()
	n := 0
	fmt.Sscan(gitIn(t, f.Bare, nil, "rev-list", "--count", "main"), &n)
	return n
}

// TestOperatorVerbsThroughGit: in a project whose claims are on the git
// remote, each operator verb on a plan another machine leases goes through
// the backend and leaves one consistent state on the remote: someone
// else's lease needs --force; park, return and complete move the plan and
// drop its lease in one commit; release drops the lease and leaves the
// plan; promote moves a draft. The operator's clone is never touched.
func TestOperatorVerbsThroughGit(t *testing.T) {
	t.Parallel()
	f := remotetest.NewFleet(t, append(remotetest.Plans(4), fwtest.Plan{Rel: "drafts/d1.md"})...)
	a, b := f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, a)
	for _, slug := range []string{"p000", "p001", "p002", "p003"} {
		fwtest.Want(t, fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w1", "--slug", slug), 0)
	}
	op := func(args ...string) fwtest.Result {
		return fwtest.Run(t, b, append(append([]string{}, args...), "--root", b, "--agent-id", "op")...)
	}
	before := commits(t, f)
	r := op("park", "p000", "--to", "blocked", "--reason", "flaky")
	if r.Code != 2 || !strings.Contains(r.Stderr, "held by w1") || !strings.Contains(r.Stderr, "--force overrides") {
		t.Errorf("park of w1's plan without --force: %v", r)
	}
	if f.Leases(t)["p000"] == "" || !remoteFiles(t, f)["bugs/p000.md"] || commits(t, f) != before {
		t.Fatalf("a refused park changed the remote")
	}
	r = op("park", "p000", "--to", "blocked", "--reason", "flaky", "--force")
	if r.Code != 0 || !strings.HasSuffix(strings.TrimSpace(r.Stdout), "blocked/p000.md") || !strings.Contains(r.Stderr, "w1's lease") {
		t.Errorf("forced park: %v", r)
	}
	files := remoteFiles(t, f)
	if !files["blocked/p000.md"] || files["bugs/p000.md"] || f.Leases(t)["p000"] != "" || commits(t, f) != before+1 {
		t.Errorf("after the park: blocked %v, lease %q, %d commits (want %d)", files["blocked/p000.md"], f.Leases(t)["p000"], commits(t, f), before+1)
	}
	if msg := gitIn(t, f.Bare, nil, "log", "-1", "--format=%B", "main"); !strings.Contains(msg, "flaky") {
		t.Errorf("the park's commit says %q", msg)
	}
	r = op("release", "p001", "--force")
	if r.Code != 0 || f.Leases(t)["p001"] != "" || !remoteFiles(t, f)["features/p001.md"] {
		t.Errorf("forced release: %v (leases %v)", r, f.Leases(t))
	}
	r = op("return", "p002", "--force")
	if r.Code != 0 || f.Leases(t)["p002"] != "" || !remoteFiles(t, f)["features/p002.md"] || !strings.HasSuffix(strings.TrimSpace(r.Stdout), "features/p002.md") {
		t.Errorf("return of a leased plan (its lease dropped, the plan where it is): %v", r)
	}
	before = commits(t, f)
	r = fwtest.Run(t, b, "complete", "p003", "--root", b, "--agent-id", "w1")
	files = remoteFiles(t, f)
	if r.Code != 0 || !files["completed/p003.md"] || files["bugs/p003.md"] || f.Leases(t)["p003"] != "" || commits(t, f) != before+1 {
		t.Errorf("complete by the holder: %v (leases %v)", r, f.Leases(t))
	}
	fwtest.Want(t, op("return", "p000", "--to", "bugs"), 0)
	r = op("promote", "d1", "--to", "features")
	if r.Code != 2 || !strings.Contains(r.Stderr, "not promoted: no `- **Preferred models:**`") || !strings.Contains(r.Stderr, "--force overrides") {
		t.Errorf("promote of an incomplete draft: %v", r)
	}
	fwtest.Want(t, op("promote", "d1", "--to", "features", "--force"), 0)
	files = remoteFiles(t, f)
	if !files["bugs/p000.md"] || !files["features/d1.md"] || files["drafts/d1.md"] {
		t.Errorf("return and promote: the remote holds %v", files)
	}
	if len(f.Leases(t)) != 0 {
		t.Errorf("leases left: %v", f.Leases(t))
	}
	// The operator's own checkout is as it was cloned.
	if !fwtest.Exists(b, "bugs/p000.md") || !fwtest.Exists(b, "drafts/d1.md") || fwtest.Exists(b, "completed/p003.md") {
		t.Errorf("a remote verb moved plans in the operator's checkout")
	}
	if st := gitIn(t, b, nil, "status", "--porcelain", "--", ".plans"); st != "" {
		t.Errorf("the operator's checkout changed: %s", st)
	}
}

// TestClaimsFlagAgainstTheProject: a worker, verb or acting face told another backend
// than fleetwatch.yaml's is refused in one line, exit 2; --claims local,
// said on purpose, is warned about on stderr and works on the lease files.
func TestClaimsFlagAgainstTheProject(t *testing.T) {
	t.Parallel()
	f := remotetest.NewFleet(t, remotetest.Plans(2)...)
	a, b := f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, a)
	fwtest.Want(t, fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w1", "--slug", "p000"), 0)
	for _, args := range [][]string{
		{"work-once", "--root", b, "--claims", "etcd", "--list"},
		{"work-once", "--root", b, "--claims", "etcd", "--once"},
		{"park", "p001", "--to", "blocked", "--root", b, "--claims", "etcd"},
		{"--root", b, "--claims", "etcd"}, // the cockpit, which acts and spawns
		{"serve", "--root", b, "--claims", "etcd", "--authorized-keys", "/dev/null", "--listen", "127.0.0.1:0"},
	} {
		r := fwtest.Run(t, b, args...)
		fwtest.OneLineError(t, r, "--claims etcd")
		if !strings.Contains(r.Stderr, "fleetwatch.yaml keeps this project's claims in git") {
			t.Errorf("%v: %v", args, r)
		}
	}
	r := fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "w2", "--claims", "local", "--slug", "p000")
	if r.Code != 0 || !strings.Contains(r.Stderr, "warning: --claims local") || !strings.Contains(r.Stderr, "another machine holds") {
		t.Errorf("--claims local in a git project: %v", r)
	}
	r = fwtest.Run(t, b, "park", "p001", "--to", "blocked", "--root", b, "--claims", "local")
	if r.Code != 0 || !strings.Contains(r.Stderr, "warning: --claims local") || !fwtest.Exists(b, "blocked/p001.md") {
		t.Errorf("park --claims local: %v", r)
	}
	if files := remoteFiles(t, f); !files["features/p001.md"] {
		t.Errorf("a --claims local park moved the remote's plan: %v", files)
	}
}

// TestParkRacesBarePicks is the finding: fifteen plans, three workers
// bare-picking in a loop on their own clones while an agent claims and
// parks its plans (work-once --park) and an operator parks free ones
// (fleetwatch park). No parked plan ends in blocked/ with a lease, and
// every lease is on a plan in a ready lane.
func TestParkRacesBarePicks(t *testing.T) {
	t.Parallel()
	f := remotetest.NewFleet(t, remotetest.Plans(15)...)
	url := f.Daemon(t)
	clones := make([]string, 5)
	for i := range clones {
		clones[i] = f.Clone(t, url)
	}
	remotetest.NeedBackend(t, clones[0])
	var wg sync.WaitGroup
	var mu sync.Mutex
	parked := 0
	note := func(r fwtest.Result) {
		if r.Code == 0 {
			mu.Lock()
			parked++
			mu.Unlock()
		}
	}
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := clones[i]
			// Three claims each: the parks get at least six plans to race for.
			for range 3 {
				if r := fwtest.Run(t, d, "work-once", "--root", d, "--agent-id", fmt.Sprintf("racer%d", i), "--once"); r.Code == 1 {
					return
				} else if r.Code != 0 {
					t.Errorf("racer %d: %v", i, r)
					return
				}
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		d := clones[3]
		for n := 0; n < 15; n += 2 {
			slug := fmt.Sprintf("p%03d", n)
			if fwtest.Run(t, d, "work-once", "--root", d, "--agent-id", "parker", "--slug", slug).Code == 0 {
				r := fwtest.Run(t, d, "work-once", "--root", d, "--agent-id", "parker", "--park", "blocked", "--slug", slug)
				if r.Code != 0 {
					t.Errorf("parker's park of its own claim: %v", r)
				}
				note(r)
			}
		}
	}()
	go func() {
		defer wg.Done()
		d := clones[4]
		for n := 1; n < 15; n += 2 {
			r := fwtest.Run(t, d, "park", fmt.Sprintf("p%03d", n), "--to", "blocked", "--root", d, "--agent-id", "op")
			if r.Code != 0 && !strings.Contains(r.Stderr, "held by racer") && !strings.Contains(r.Stderr, "claimed by someone else") {
				t.Errorf("operator park: %v", r)
			}
			note(r)
		}
	}()
	wg.Wait()
	files, leases := remoteFiles(t, f), f.Leases(t)
	blocked := 0
	for rel := range files {
		if strings.HasPrefix(rel, "blocked/") && strings.HasSuffix(rel, ".md") {
			blocked++
			if slug := remotetest.SlugOf(rel); leases[slug] != "" {
				t.Errorf("%s is parked with a live lease %s", rel, leases[slug])
			}
		}
	}
	for slug := range leases {
		if !files["bugs/"+slug+".md"] && !files["features/"+slug+".md"] {
			t.Errorf("lease %s is on no ready plan", slug)
		}
	}
	if blocked != parked || blocked == 0 {
		t.Errorf("%d plans in blocked/, %d parks reported done", blocked, parked)
	}
	t.Logf("%d parked, %d leased by racers, of 15", blocked, len(leases))
	if t.Failed() {
		t.Logf("remote: %v\nleases: %v", files, leases)
	}
}

// TestOddNamesThroughGit: plans whose slugs git refuses in a lease ref are
// skipped with the reason by --list and reported by check; a bare claim
// claims the good plans; a named claim of one says why, exit 2.
func TestOddNamesThroughGit(t *testing.T) {
	t.Parallel()
	odd := []string{"a b", "q?x", "tilde~1", "x..y"}
	var ps []fwtest.Plan
	for _, s := range odd {
		ps = append(ps, fwtest.Plan{Rel: "bugs/" + s + ".md", Fields: "Priority: P1"})
	}
	ps = append(ps, fwtest.Plan{Rel: "features/good1.md"}, fwtest.Plan{Rel: "features/good2.md"})
	f := remotetest.NewFleet(t, ps...)
	a := f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, a)
	r := fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w", "--list")
	check := fwtest.Run(t, a, "check", "--root", a)
	if check.Code != 1 {
		t.Errorf("check: %v", check)
	}
	for _, s := range odd {
		want := fmt.Sprintf("bugs/%s.md  git refuses its lease ref name %q", s, s)
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("--list does not say %q:\n%s", want, r.Stderr)
		}
		if !strings.Contains(check.Stdout, fmt.Sprintf("bugs/%s.md: never claimed over git claims: git refuses its lease ref name", s)) {
			t.Errorf("check does not report %s:\n%s", s, check.Stdout)
		}
	}
	board := fwtest.Run(t, a, "board", "--root", a, "--once", "--json")
	if board.Code != 0 || strings.Count(board.Stdout, `"problem": "git refuses its`) != len(odd) {
		t.Errorf("board --json does not give each odd name its problem: %v", board)
	}
	r = fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w", "--max-plans", "10")
	if r.Code != 0 || strings.Count(r.Stdout, "\n") != 2 || !strings.Contains(r.Stdout, "good1.md") || !strings.Contains(r.Stdout, "good2.md") {
		t.Errorf("a bare claim of up to 10: %v", r)
	}
	r = fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w", "--slug", "q?x")
	if r.Code != 2 || !strings.Contains(r.Stderr, "git refuses its lease ref name") {
		t.Errorf("--slug q?x: %v", r)
	}
	// They can still be set aside, to be renamed.
	r = fwtest.Run(t, a, "park", "a b", "--to", "ambiguous", "--root", a)
	if r.Code != 0 || !remoteFiles(t, f)["ambiguous/a b.md"] {
		t.Errorf("park of an odd name: %v", r)
	}
}

// TestRewindKeepsCompletedPlansClosed: the remote's main force-pushed back
// to a commit before a plan was completed is a notice (stderr, the event
// log, check), and the plan it put back in bugs/ is not claimed, though it
// is the first pick, until the operator accepts the rewind.
func TestRewindKeepsCompletedPlansClosed(t *testing.T) {
	t.Parallel()
	f := remotetest.NewFleet(t, remotetest.Plans(3)...)
	a := f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, a)
	old := gitIn(t, f.Bare, nil, "rev-parse", "main")
	fwtest.Want(t, fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w1", "--slug", "p000"), 0)
	fwtest.Want(t, fwtest.Run(t, a, "complete", "p000", "--root", a, "--agent-id", "w1"), 0)
	if l := remotetest.List(t, a, "w1"); len(l.Plans) == 0 {
		t.Fatal("no plans listed")
	}
	gitIn(t, f.Bare, nil, "update-ref", "refs/heads/main", old)
	r := fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w2", "--once")
	if r.Code != 0 || remotetest.SlugOf(r.Stdout) == "p000" || !strings.Contains(r.Stderr, " to "+old[:12]+" (not a descendant") {
		t.Fatalf("a bare claim after the rewind: %v", r)
	}
	r = fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w2", "--list")
	if !strings.Contains(r.Stderr, "bugs/p000.md  completed before origin/main moved back") {
		t.Errorf("--list after the rewind:\n%s", r.Stderr)
	}
	if r := fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w2", "--slug", "p000"); r.Code != 2 || !strings.Contains(r.Stderr, "completed before") {
		t.Errorf("--slug p000 after the rewind: %v", r)
	}
	if b := fwtest.Run(t, a, "board", "--root", a, "--once"); !strings.Contains(b.Stdout+b.Stderr, "moved back from") {
		t.Errorf("board after the rewind: %v", b)
	}
	events, _ := os.ReadFile(filepath.Join(a, ".plans", "logs", "events.jsonl"))
	if strings.Count(string(events), `"event":"rewind"`) != 1 {
		t.Errorf("the event log has %d rewinds:\n%s", strings.Count(string(events), `"event":"rewind"`), events)
	}
	r = fwtest.Run(t, a, "check", "--root", a)
	if r.Code != 1 || !strings.Contains(r.Stdout, "origin/main: moved back from") || !strings.Contains(r.Stdout, "bugs/p000.md: not claimed: completed before") {
		t.Errorf("check after the rewind: %v", r)
	}
	r = fwtest.Run(t, a, "check", "--root", a, "--accept-rewind")
	if !strings.Contains(r.Stdout, "accepted the move of main back") || strings.Contains(r.Stdout, "moved back from") {
		t.Errorf("check --accept-rewind: %v", r)
	}
	fwtest.Want(t, fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w2", "--slug", "p000"), 0)
}
