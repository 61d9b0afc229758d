package demo

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// demoNow is the moment the test demos show.
var demoNow = time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC)

// open creates the demo in a fresh directory and returns its tree, clock
// set to demoNow, and a snapshot.
func open(t *testing.T) (*planfs.Tree, *model.Snapshot) {
	t.Helper()
	project, err := Create(filepath.Join(t.TempDir(), "jotter"), demoNow, []string{"/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := planfs.Open(project)
	if err != nil {
		t.Fatal(err)
	}
	tr.Now = func() time.Time { return demoNow }
	snap, err := tr.Scan()
	if err != nil {
		t.Fatal(err)
	}
	return tr, snap
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func plan(t *testing.T, snap *model.Snapshot, rel string) *model.Plan {
	t.Helper()
	p := snap.PlanAt(rel)
	if p == nil {
		t.Fatalf("no plan %s", rel)
	}
	return p
}

func TestDemoTree(t *testing.T) {
	t.Parallel()
	tr, snap := open(t)
	if len(snap.Plans) < 14 {
		t.Errorf("%d plans, want at least 14", len(snap.Plans))
	}
	perLane := map[model.Lane]int{}
	for _, p := range snap.Plans {
		perLane[p.Lane]++
	}
	for _, l := range model.Lanes {
		if perLane[l] == 0 {
			t.Errorf("lane %s is empty", l)
		}
	}
	t.Logf("%d plans: %v", len(snap.Plans), perLane)

	// Exactly the problems Create's doc comment promises, nothing else.
	want := []string{
		"drafts/dark-mode.md: bold key without `-` bullet",
		`features/export-to-pdf.md: depends on "pdf-renderer-spike", which is in no lane`,
		"in-progress/crash-on-empty-title.md: lease held by small-2 expired",
	}
	warns := tr.Check(snap)
	for _, w := range warns {
		got := w.File + ": " + w.Message
		if !slices.ContainsFunc(want, func(s string) bool { return strings.HasPrefix(got, s) }) {
			t.Errorf("unexpected warning %s", got)
		}
	}
	for _, s := range want {
		if !slices.ContainsFunc(warns, func(w model.Warning) bool { return strings.HasPrefix(w.File+": "+w.Message, s) }) {
			t.Errorf("missing warning %s", s)
		}
	}

	// A person's plan and a draft promote refuses.
	if h := plan(t, snap, "features/rotate-signing-key.md").Header; h.AgentAssignable || h.Assignee != "alice" {
		t.Errorf("rotate-signing-key assignee %q, agent-assignable %v", h.Assignee, h.AgentAssignable)
	}
	if probs := planfs.PromoteProblems(plan(t, snap, "drafts/dark-mode.md").Header); len(probs) != 2 {
		t.Errorf("dark-mode promote problems %v, want Preferred models and Done when", probs)
	}
	if h := plan(t, snap, "drafts/offline-sync.md").Header; len(planfs.PromoteProblems(h)) != 0 {
		t.Errorf("offline-sync should be promotable: %v", planfs.PromoteProblems(h))
	}

	// Preferred models name every tier and some models.
	tokens := map[string]bool{}
	for _, p := range snap.Plans {
		for _, tok := range p.Header.Preferred {
			tokens[tok] = true
		}
	}
	for _, tok := range []string{"small", "mid", "reasoner", "frontier", "qwen2.5-coder-7b", "claude-sonnet"} {
		if !tokens[tok] {
			t.Errorf("no plan prefers %s", tok)
		}
	}
	for _, pri := range []string{"P1", "P2", "P3"} {
		if !slices.ContainsFunc(snap.Plans, func(p model.Plan) bool { return p.Header.Priority == pri }) {
			t.Errorf("no %s plan", pri)
		}
	}
}

func TestDemoLeases(t *testing.T) {
	t.Parallel()
	tr, snap := open(t)
	now := tr.NowSeconds()
	var active, expired, inbox []string
	for _, l := range snap.Leases {
		switch {
		case l.Corrupt != "":
			t.Errorf("corrupt lease %s: %s", l.File, l.Corrupt)
		case l.Awaiting != "":
			inbox = append(inbox, l.Rel+" "+l.AgentID+" "+l.AwaitingText())
		case l.Active(now):
			active = append(active, l.Rel+" "+l.AgentID)
		default:
			expired = append(expired, l.Rel+" "+l.AgentID)
		}
	}
	if len(active) != 1 || active[0] != "in-progress/duplicate-tags-by-case.md mid-1" {
		t.Errorf("active leases %v", active)
	}
	if len(expired) != 1 || expired[0] != "in-progress/crash-on-empty-title.md small-2" {
		t.Errorf("expired leases %v", expired)
	}
	if len(inbox) != 1 || inbox[0] != "in-progress/share-links.md reasoner-2 awaiting approval" {
		t.Errorf("inbox-held leases %v", inbox)
	}
	if l := snap.LeaseFor("in-progress/duplicate-tags-by-case.md"); l != nil && l.ExpiresAt-now != 50*60 {
		t.Errorf("live lease has %vs left, want 50 min", l.ExpiresAt-now)
	}
	if l := snap.LeaseFor("in-progress/crash-on-empty-title.md"); l != nil && now-l.ExpiresAt != 60*60 {
		t.Errorf("expired lease ran out %vs ago, want an hour", now-l.ExpiresAt)
	}
}

func TestDemoPicksAndDeps(t *testing.T) {
	t.Parallel()
	tr, snap := open(t)
	opt := model.Options{Now: tr.NowSeconds(), History: tr.History()}
	for _, tier := range model.Tiers {
		rows := model.Decide(snap, model.Worker{AgentID: "test", Tier: tier}, opt)
		var picks []string
		for _, r := range model.Picks(rows, nil) {
			picks = append(picks, r.Plan.Slug)
		}
		t.Logf("%-8s picks %v", tier, picks)
		if len(picks) == 0 {
			t.Errorf("a %s worker has nothing to pick", tier)
		}
		// The ready order is fixed by the demo's times.
		if tier == model.Small && strings.Join(picks, " ") != "utc-dates-in-list note-pinning keyboard-shortcuts tag-autocomplete" {
			t.Errorf("small picks %v", picks)
		}
		if tier == model.Mid && (len(picks) == 0 || picks[0] != "full-text-search") {
			t.Errorf("mid picks %v, want full-text-search first", picks)
		}
	}

	deps := map[string]model.DepStatus{}
	for i, st := range model.NewDepIndex(snap).Evaluate(tr.History()) {
		deps[snap.Plans[i].Slug] = st
	}
	// The chain: save-notes-to-disk (completed) ← full-text-search ← search-result-highlighting.
	if plan(t, snap, "completed/save-notes-to-disk.md") == nil || !deps["full-text-search"].Met {
		t.Errorf("full-text-search deps %+v, want met", deps["full-text-search"])
	}
	if d := deps["search-result-highlighting"]; d.Met || len(d.Unmet) != 1 || d.Unmet[0] != (model.Unmet{Slug: "full-text-search", Reason: "open:features"}) {
		t.Errorf("search-result-highlighting deps %+v, want full-text-search open", d)
	}
	if d := deps["export-to-pdf"]; d.Met || len(d.Unmet) != 1 || d.Unmet[0].Reason != "missing" {
		t.Errorf("export-to-pdf deps %+v, want one missing", d)
	}
	// session-cookies is in no lane: only git history meets it.
	if _, ok := deps["session-cookies"]; ok {
		t.Error("session-cookies should have been deleted")
	}
	if d := deps["rate-limit-login"]; !d.Met {
		t.Errorf("rate-limit-login deps %+v, want met through git history", d)
	}
	if d := model.NewDepIndex(snap).Evaluate(nil)[slices.IndexFunc(snap.Plans, func(p model.Plan) bool { return p.Slug == "rate-limit-login" })]; d.Met {
		t.Error("rate-limit-login is met even without git history")
	}
}

func TestDemoEventsAndGit(t *testing.T) {
	t.Parallel()
	tr, _ := open(t)
	events, err := tr.Events()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	prev := ""
	for _, e := range events {
		kinds[e.Event]++
		if e.TS < prev {
			t.Errorf("event %+v is older than the one before it", e)
		}
		prev = e.TS
		if e.Event == "park" && e.Reason == "" {
			t.Errorf("park without a reason: %+v", e)
		}
	}
	for _, k := range []string{"create", "claim", "complete", "promote", "park"} {
		if kinds[k] == 0 {
			t.Errorf("no %s event in %v", k, kinds)
		}
	}
	if last := events[len(events)-1].TS; last > demoNow.Format(time.RFC3339Nano) {
		t.Errorf("last event %s is after now", last)
	}

	n, err := strconv.Atoi(strings.TrimSpace(gitOut(t, tr.Project, "rev-list", "--count", "HEAD")))
	if err != nil || n < 3 {
		t.Errorf("%d commits (%v), want at least 3", n, err)
	}
	if st := gitOut(t, tr.Project, "status", "--porcelain"); st != "" {
		t.Errorf("work tree not clean:\n%s", st)
	}
	if br := strings.TrimSpace(gitOut(t, tr.Project, "branch", "--show-current")); br != "main" {
		t.Errorf("branch %q", br)
	}
	first := strings.Fields(gitOut(t, tr.Project, "log", "--reverse", "--format=%at"))[0]
	if ts, _ := strconv.ParseInt(first, 10, 64); time.Unix(ts, 0).After(demoNow.Add(-7 * day)) {
		t.Errorf("history starts %v, want days before now", time.Unix(ts, 0))
	}
	if head, _ := strconv.ParseInt(strings.TrimSpace(gitOut(t, tr.Project, "log", "-1", "--format=%ct")), 10, 64); head > demoNow.Unix() {
		t.Errorf("last commit %v is after now", time.Unix(head, 0))
	}
	// Commits work with no global identity: the repo has its own.
	if name := strings.TrimSpace(gitOut(t, tr.Project, "config", "--local", "user.name")); name == "" {
		t.Error("no local user.name")
	}
}

func TestDemoRefusesNonEmptyDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "jotter")
	if _, err := Create(dir, demoNow, nil); err != nil {
		t.Fatal(err)
	}
	before := gitOut(t, dir, "rev-parse", "HEAD")
	if _, err := Create(dir, demoNow, nil); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("second Create in the same dir: %v", err)
	}
	if after := gitOut(t, dir, "rev-parse", "HEAD"); after != before {
		t.Error("second Create changed the repo")
	}

	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "keep.txt"), []byte("mine"), 0o644)
	if _, err := Create(other, demoNow, nil); err == nil {
		t.Fatal("Create in a non-empty dir succeeded")
	}
	if entries, _ := os.ReadDir(other); len(entries) != 1 {
		t.Errorf("Create wrote into a non-empty dir: %v", entries)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Create(file, demoNow, nil); err == nil {
		t.Fatal("Create over a file succeeded")
	}
}

// leaseToken is the token an event records of the lease a plan moved under.
var leaseToken = regexp.MustCompile(`"lease":"[0-9a-f]+"`)

// TestDemoDeterministic: the same now gives the same plans, mtimes, events
// and history; only commit ids and lease tokens may differ.
func TestDemoDeterministic(t *testing.T) {
	t.Parallel()
	a, _ := open(t)
	b, _ := open(t)
	facts := func(tr *planfs.Tree) map[string]string {
		out := map[string]string{}
		err := filepath.WalkDir(tr.Plans, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.Contains(p, "/.leases/") {
				return err
			}
			rel, _ := filepath.Rel(tr.Plans, p)
			data, err := os.ReadFile(p)
			out[rel] = leaseToken.ReplaceAllString(string(data), `"lease":"…"`)
			// Plans are back-dated; the scaffold's files are not.
			if _, _, err := planfs.SplitRel(filepath.ToSlash(rel)); err == nil {
				fi, _ := d.Info()
				out[rel] += "\n@" + fi.ModTime().UTC().String()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		out["git log"] = gitOut(t, tr.Project, "log", "--format=%an %ad %cd %s", "--name-status")
		return out
	}
	fa, fb := facts(a), facts(b)
	for k, v := range fa {
		if fb[k] != v {
			t.Errorf("%s differs:\n%s\n---\n%s", k, v, fb[k])
		}
	}
	if len(fa) != len(fb) {
		t.Errorf("%d files vs %d", len(fa), len(fb))
	}
	for _, rel := range []string{"features/full-text-search.md", "features/note-pinning.md"} {
		fi, err := os.Stat(a.Abs(rel))
		if err != nil || fi.ModTime().After(demoNow.Add(-5*day)) {
			t.Errorf("%s mtime %v, want back-dated days (%v)", rel, fi.ModTime(), err)
		}
	}
}

// TestDemoIgnoresCallersGit: run from a git hook (GIT_DIR, GIT_INDEX_FILE
// set) on a machine without a git identity, Create still builds its own
// repository and touches no other.
func TestDemoIgnoresCallersGit(t *testing.T) {
	outer := t.TempDir()
	t.Setenv("GIT_DIR", filepath.Join(outer, "not-a-repo"))
	t.Setenv("GIT_INDEX_FILE", filepath.Join(outer, "index"))
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := filepath.Join(t.TempDir(), "jotter")
	if _, err := Create(dir, demoNow, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "HEAD")); err != nil {
		t.Errorf("no repository of its own: %v", err)
	}
	if entries, _ := os.ReadDir(outer); len(entries) != 0 {
		t.Errorf("wrote to the caller's git: %v", entries)
	}
}

func TestDemoWorkers(t *testing.T) {
	tr, _ := open(t)
	states, problems := look.ReadStates(tr.Project)
	if len(problems) > 0 || len(states) != 3 {
		t.Fatalf("states %+v problems %v", states, problems)
	}
	want := map[string]look.Health{"mid-1": look.Live, "small-2": look.Dead, "reasoner-1": look.Exited}
	for _, st := range states {
		if h := st.Health(demoNow); h != want[st.AgentID] {
			t.Errorf("%s: %s, want %s", st.AgentID, h, want[st.AgentID])
		}
		if _, err := os.Stat(look.LogPath(tr.Project, st.AgentID)); err != nil {
			t.Errorf("%s has no log: %v", st.AgentID, err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(tr.Project, "endpoints.yaml")); err != nil || !strings.Contains(string(data), `executor: ["/bin/true", "{plan}"]`) {
		t.Errorf("endpoints.yaml: %s %v", data, err)
	}
	if st := gitOut(t, tr.Project, "status", "--porcelain"); st != "" {
		t.Errorf("the demo's own files should be ignored by git:\n%s", st)
	}
}

// TestDemoSpendsTodayAfterMidnight: a demo opened just after midnight
// still has the day's spend its header and Fleet pane show.
func TestDemoSpendsTodayAfterMidnight(t *testing.T) {
	for _, now := range []time.Time{
		time.Date(2026, 3, 4, 0, 10, 0, 0, time.Local),
		time.Date(2026, 3, 4, 23, 50, 0, 0, time.Local),
	} {
		project, err := Create(filepath.Join(t.TempDir(), "jotter"), now, []string{"/bin/true"})
		if err != nil {
			t.Fatal(err)
		}
		spent, err := ledger.ReadToday(project, now)
		if err != nil {
			t.Fatal(err)
		}
		if spent.FleetDay.USD < 4 {
			t.Errorf("at %s the demo spent $%.2f today; want the last day's runs ($4.46)", now.Format("15:04"), spent.FleetDay.USD)
		}
	}
}
