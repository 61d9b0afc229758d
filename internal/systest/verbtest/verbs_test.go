package verbtest

// CLI tests for the operator verbs over anchor's lease protocol (TESTS
// items 62–78 of /work/shared/anchor/TESTS.md), the event log, promote,
// scaffold and check, and ownership checks on every verb. Item numbers are
// given in comments as "TESTS n".

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// ---- plan_lease: TESTS 62–78 ----

// TESTS 62 and 63: anchor's ready-path lease (mid-claim) is respected.
func TestAnchorReadyPathLeaseBlocksOtherClaimers(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/foo.md", Fields: "Preferred models: mid"})
	fwtest.PutLease(t, dir, "features/foo.md", fwtest.AnchorLease("features/foo.md", "agent-a", 0, 60))

	r := fwtest.Run(t, dir, "work-once", "--list", "--agent-id", "agent-b")
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stderr, "#   features/foo.md  agent=agent-a") {
		t.Errorf("active leases on stderr lack features/foo.md: %v", r)
	}
	m := fwtest.WorkOnceJSON(t, dir, "--agent-id", "agent-b")
	p := fwtest.JSONPlan(t, m, "features/foo.md")
	if l, _ := p["lease"].(map[string]any); l == nil || l["agent_id"] != "agent-a" || l["expired"] != false || p["eligible"] != false {
		t.Errorf("JSON for leased plan: %v", p)
	}

	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "agent-b"), 1)
	r = fwtest.Run(t, dir, "work-once", "--slug", "foo", "--agent-id", "agent-b")
	fwtest.Want(t, r, 1)
	if !strings.Contains(r.Stderr, "already claimed") || !strings.Contains(r.Stderr, "agent-a") {
		t.Errorf("want 'already claimed by agent-a': %v", r)
	}
	if !fwtest.Exists(dir, "features/foo.md") || fwtest.ActiveOwner(t, dir, "features/foo.md") != "agent-a" {
		t.Errorf("anchor's lease or plan disturbed")
	}
}

// TESTS 64 and 65.
func TestClaimWritesAnchorLeaseWithOrigin(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/foo.md", Fields: "Preferred models: mid"})
	r := fwtest.Run(t, dir, "work-once", "--slug", "foo", "--agent-id", "agent-a")
	fwtest.Want(t, r, 0)
	if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "in-progress/foo.md") || fwtest.Exists(dir, "features/foo.md") || !fwtest.Exists(dir, "in-progress/foo.md") {
		t.Fatalf("claim: %v", r)
	}
	l := fwtest.LeaseOf(t, dir, "in-progress/foo.md")
	for k, v := range map[string]any{"plan": "in-progress/foo.md", "agent_id": "agent-a", "origin": "features/foo.md"} {
		if l[k] != v {
			t.Errorf("lease %s = %v, want %v", k, l[k], v)
		}
	}
	ca, ok1 := l["claimed_at"].(float64)
	ea, ok2 := l["expires_at"].(float64)
	if !ok1 || !ok2 || ea-ca < 3599 || ea-ca > 3601 {
		t.Errorf("claimed_at/expires_at must be epoch floats 3600 s apart (default TTL): %v", l)
	}
	// 65: owned in-progress rows appear for agent-a only.
	ra := fwtest.Run(t, dir, "work-once", "--list", "--agent-id", "agent-a")
	rb := fwtest.Run(t, dir, "work-once", "--list", "--agent-id", "agent-b")
	if !strings.Contains(ra.Stdout, "in-progress/foo.md\t") {
		t.Errorf("agent-a's list lacks its in-progress plan: %v", ra)
	}
	if strings.Contains(rb.Stdout, "in-progress/foo.md") || !strings.Contains(rb.Stderr, "#   in-progress/foo.md  agent=agent-a") {
		t.Errorf("agent-b sees agent-a's plan as its own: %v", rb)
	}
}

// TESTS 68 and 69: an expired ready-path lease is no lease.
func TestExpiredReadyPathLeaseIsReclaimable(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/foo.md", Fields: "Preferred models: mid"})
	fwtest.PutRaw(t, dir, ".leases/features__foo.md.json", `{"plan":"features/foo.md","agent_id":"agent-a","claimed_at":1,"expires_at":2}`)
	r := fwtest.Run(t, dir, "work-once", "--list", "--agent-id", "agent-b")
	fwtest.Want(t, r, 0)
	if strings.Contains(r.Stderr, "agent=agent-a") || !strings.Contains(r.Stdout, "features/foo.md\tfeatures\tP2\tmedium\tmid\tgood\tnone\tai\t-\n") {
		t.Errorf("expired lease still counts: %v", r)
	}
	r = fwtest.Run(t, dir, "work-once", "--slug", "foo", "--agent-id", "agent-b")
	fwtest.Want(t, r, 0)
	if fwtest.ActiveOwner(t, dir, "in-progress/foo.md") != "agent-b" {
		t.Errorf("owner: %v", fwtest.LeaseOf(t, dir, "in-progress/foo.md"))
	}
}

// TESTS 70: releasing one's own lease leaves no active lease.
func TestReleaseOwnLease(t *testing.T) {
	t.Parallel()
	t.Run("ReadyPath", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/foo.md", Fields: "Preferred models: mid"})
		fwtest.PutLease(t, dir, "features/foo.md", fwtest.AnchorLease("features/foo.md", "agent-a", 0, 60))
		r := fwtest.Run(t, dir, "work-once", "--release", "features/foo.md", "--agent-id", "agent-a")
		fwtest.Want(t, r, 0)
		if !strings.Contains(r.Stdout, "released features/foo.md") || fwtest.LeaseOf(t, dir, "features/foo.md") != nil || !fwtest.Exists(dir, "features/foo.md") {
			t.Errorf("release: %v", r)
		}
	})
	t.Run("InProgress", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/foo.md", Fields: "Preferred models: mid"})
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "foo", "--agent-id", "agent-a"), 0)
		r := fwtest.Run(t, dir, "work-once", "--release", "in-progress/foo.md", "--agent-id", "agent-a")
		fwtest.Want(t, r, 0)
		if !strings.Contains(r.Stdout, "released in-progress/foo.md") {
			t.Errorf("release output: %v", r)
		}
		// Deliberate difference: the plan goes back to its origin lane.
		if fwtest.LeaseOf(t, dir, "in-progress/foo.md") != nil || !fwtest.Exists(dir, "features/foo.md") || fwtest.Exists(dir, "in-progress/foo.md") {
			t.Errorf("after release: %v", r)
		}
	})
	t.Run("NoLease", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/foo.md", Fields: "Preferred models: mid"})
		r := fwtest.Run(t, dir, "work-once", "--release", "features/foo.md", "--agent-id", "agent-a")
		fwtest.Want(t, r, 0)
		if !strings.Contains(r.Stdout, "no lease features/foo.md") {
			t.Errorf("anchor prints 'no lease REL': %v", r)
		}
	})
}

// TESTS 71–74: park and return, through the operator verbs.
func TestParkAndReturnVerbs(t *testing.T) {
	t.Parallel()
	t.Run("ParkReadyPlan", func(t *testing.T) { // 71
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/half.md", Fields: "Preferred models: mid"})
		r := fwtest.Run(t, dir, "park", "half", "--to", "ambiguous")
		fwtest.Want(t, r, 0)
		if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "ambiguous/half.md") || fwtest.Exists(dir, "features/half.md") {
			t.Fatalf("park: %v", r)
		}
	})
	t.Run("ParkClaimedPlanDropsLease", func(t *testing.T) { // 72
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/stuck.md", Fields: "Preferred models: mid"})
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "stuck", "--agent-id", "agent-a"), 0)
		r := fwtest.Run(t, dir, "park", "in-progress/stuck.md", "--to", "blocked", "--agent-id", "agent-a")
		fwtest.Want(t, r, 0)
		if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "blocked/stuck.md") || fwtest.LeaseOf(t, dir, "in-progress/stuck.md") != nil || fwtest.Exists(dir, "in-progress/stuck.md") {
			t.Fatalf("park: %v", r)
		}
	})
	t.Run("ReturnClaimedBugToBugs", func(t *testing.T) { // 73
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/b.md", Fields: "Preferred models: mid"})
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "b", "--agent-id", "agent-a"), 0)
		r := fwtest.Run(t, dir, "return", "in-progress/b.md", "--agent-id", "agent-a")
		fwtest.Want(t, r, 0)
		if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "bugs/b.md") || !fwtest.Exists(dir, "bugs/b.md") || fwtest.LeaseOf(t, dir, "in-progress/b.md") != nil {
			t.Fatalf("return: %v", r)
		}
	})
	t.Run("ReturnParkedToTargetLane", func(t *testing.T) { // 74
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/x.md", Fields: "Preferred models: mid"})
		fwtest.Want(t, fwtest.Run(t, dir, "park", "features/x.md", "--to", "blocked"), 0)
		r := fwtest.Run(t, dir, "return", "blocked/x.md", "--to", "features")
		fwtest.Want(t, r, 0)
		if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "features/x.md") || fwtest.Exists(dir, "blocked/x.md") {
			t.Fatalf("return: %v", r)
		}
	})
	t.Run("WorkOnceReturnReadyTargetLane", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/x.md", Fields: "Preferred models: mid"})
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "x", "--park", "blocked"), 0)
		r := fwtest.Run(t, dir, "work-once", "--slug", "x", "--return-ready", "--target-lane", "bugs")
		fwtest.Want(t, r, 0)
		if !fwtest.Exists(dir, "bugs/x.md") || fwtest.Exists(dir, "blocked/x.md") {
			t.Fatalf("return-ready: %v", r)
		}
	})
	t.Run("ParkClaimedByOtherRefused", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/x.md", Fields: "Preferred models: mid"})
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "x", "--agent-id", "agent-a"), 0)
		r := fwtest.Run(t, dir, "park", "in-progress/x.md", "--to", "blocked", "--agent-id", "agent-b")
		fwtest.Want(t, r, 2)
		if !fwtest.Exists(dir, "in-progress/x.md") || fwtest.ActiveOwner(t, dir, "in-progress/x.md") != "agent-a" {
			t.Fatalf("park by non-owner moved the plan: %v", r)
		}
	})
}

// TESTS 76: a renew by another agent fails naming the owner.
func TestHeartbeatByOtherAgentNamesOwner(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/foo.md", Fields: "Preferred models: mid"})
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "foo", "--agent-id", "agent-a", "--lease-ttl", "60"), 0)
	before := fwtest.LeaseOf(t, dir, "in-progress/foo.md")
	r := fwtest.Run(t, dir, "work-once", "--heartbeat", "in-progress/foo.md", "--agent-id", "agent-b")
	fwtest.Want(t, r, 2)
	if !strings.Contains(r.Stderr, "agent-a") {
		t.Errorf("want message naming agent-a: %v", r)
	}
	if after := fwtest.LeaseOf(t, dir, "in-progress/foo.md"); after["agent_id"] != "agent-a" || after["expires_at"] != before["expires_at"] {
		t.Errorf("lease changed: %v → %v", before, after)
	}
}

// TESTS 78 through the operator verb.
func TestRecoverVerbTakesUnleasedInProgressPlan(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/foo.md", Fields: "Preferred models: mid"})
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "foo", "--agent-id", "agent-a"), 0)
	if err := os.Remove(fwtest.LeaseFilePath(dir, "in-progress/foo.md")); err != nil {
		t.Fatal(err)
	}
	r := fwtest.Run(t, dir, "recover", "in-progress/foo.md", "--agent-id", "agent-b")
	fwtest.Want(t, r, 0)
	if fwtest.ActiveOwner(t, dir, "in-progress/foo.md") != "agent-b" {
		t.Fatalf("owner after recover: %v", fwtest.LeaseOf(t, dir, "in-progress/foo.md"))
	}
	// A second recover by another agent is refused: the lease is active.
	fwtest.Want(t, fwtest.Run(t, dir, "recover", "foo", "--agent-id", "agent-c"), 2)
	// Its release returns the plan to bugs/, where it came from.
	fwtest.Want(t, fwtest.Run(t, dir, "release", "foo", "--agent-id", "agent-b"), 0)
	if !fwtest.Exists(dir, "bugs/foo.md") {
		t.Errorf("released plan not back in bugs/")
	}
}

// ---- event log ----

func TestEveryStateChangeAppendsEvent(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "drafts/d.md", Fields: "Preferred models: mid"})
	steps := [][]string{
		{"promote", "d", "--to", "bugs", "--agent-id", "op"},
		{"work-once", "--slug", "d", "--agent-id", "a"},
		{"release", "in-progress/d.md", "--agent-id", "a"},
		{"park", "d", "--to", "blocked", "--agent-id", "op"},
		{"return", "d", "--agent-id", "op"},
		{"work-once", "--slug", "d", "--agent-id", "a"},
	}
	for _, s := range steps {
		fwtest.Want(t, fwtest.Run(t, dir, s...), 0)
	}
	// The claimer dies; b recovers and completes.
	if err := os.Remove(fwtest.LeaseFilePath(dir, "in-progress/d.md")); err != nil {
		t.Fatal(err)
	}
	fwtest.Want(t, fwtest.Run(t, dir, "recover", "d", "--agent-id", "b"), 0)
	fwtest.Want(t, fwtest.Run(t, dir, "complete", "d", "--agent-id", "b"), 0)
	if !fwtest.Exists(dir, "completed/d.md") {
		t.Fatal("not completed")
	}

	type ev struct{ event, from, to, agent string }
	wantEvents := []ev{
		{"promote", "drafts/d.md", "bugs/d.md", "op"},
		{"claim", "bugs/d.md", "in-progress/d.md", "a"},
		{"release", "in-progress/d.md", "bugs/d.md", "a"},
		{"park", "bugs/d.md", "blocked/d.md", "op"},
		{"return", "blocked/d.md", "bugs/d.md", "op"},
		{"claim", "bugs/d.md", "in-progress/d.md", "a"},
		{"recover", "in-progress/d.md", "in-progress/d.md", "b"},
		{"complete", "in-progress/d.md", "completed/d.md", "b"},
	}
	got := fwtest.EventsOf(t, dir)
	if len(got) != len(wantEvents) {
		t.Fatalf("want %d events, got %d: %v", len(wantEvents), len(got), got)
	}
	for i, e := range got {
		for _, k := range []string{"ts", "event", "slug", "from", "to", "agent_id"} {
			if _, ok := e[k]; !ok {
				t.Errorf("event %d lacks %q: %v", i, k, e)
			}
		}
		if ts, _ := e["ts"].(string); ts == "" {
			t.Errorf("event %d has no ts: %v", i, e)
		} else if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Errorf("event %d ts %q: %v", i, ts, err)
		}
		w := wantEvents[i]
		if e["event"] != w.event || e["slug"] != "d" || e["from"] != w.from || e["to"] != w.to || e["agent_id"] != w.agent {
			t.Errorf("event %d = %v, want %+v", i, e, w)
		}
	}
}

// ---- promote, scaffold, check ----

func TestPromoteRefusesIncompleteDraft(t *testing.T) {
	t.Parallel()
	noDone := "# Plan: nodone\n\n- **Preferred models:** mid\n\n## Goal\nDo it.\n"
	cases := []struct {
		name, rel, content string
		draft              *fwtest.Plan
		problem            string
	}{
		{name: "NoPreferred", rel: "drafts/nopref.md", draft: &fwtest.Plan{Rel: "drafts/nopref.md", Fields: "Value: high"}, problem: "Preferred models"},
		{name: "NoDoneWhen", rel: "drafts/nodone.md", content: noDone, problem: "Done when"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := fwtest.NewTree(t)
			if c.draft != nil {
				fwtest.WritePlan(t, dir, *c.draft, time.Minute)
			} else {
				fwtest.PutRaw(t, dir, c.rel, c.content)
			}
			slug := strings.TrimSuffix(filepath.Base(c.rel), ".md")
			r := fwtest.Run(t, dir, "promote", slug, "--to", "features")
			fwtest.Want(t, r, 2)
			if !fwtest.Exists(dir, c.rel) || fwtest.Exists(dir, "features/"+slug+".md") || !strings.Contains(r.Stderr, c.problem) {
				t.Fatalf("refusal must keep the draft and name %q: %v", c.problem, r)
			}
			r = fwtest.Run(t, dir, "promote", slug, "--to", "features", "--force")
			fwtest.Want(t, r, 0)
			if fwtest.Exists(dir, c.rel) || !fwtest.Exists(dir, "features/"+slug+".md") || !strings.Contains(r.Stderr, "warning") || !strings.Contains(r.Stderr, c.problem) {
				t.Fatalf("--force must promote with a warning naming %q: %v", c.problem, r)
			}
		})
	}
	t.Run("CompleteDraftPromotesQuietly", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "drafts/ok.md", Fields: "Preferred models: mid"})
		r := fwtest.Run(t, dir, "promote", "ok", "--to", "bugs")
		fwtest.Want(t, r, 0)
		if !fwtest.Exists(dir, "bugs/ok.md") || r.Stderr != "" || !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "bugs/ok.md") {
			t.Fatalf("promote: %v", r)
		}
	})
}

func TestScaffoldCreatesTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fwtest.Want(t, fwtest.Run(t, dir, "scaffold", dir), 0)
	for _, d := range []string{"drafts", "bugs", "features", "in-progress", "review-needed", "ambiguous", "blocked", "completed", ".leases", "logs"} {
		if fi, err := os.Stat(filepath.Join(dir, ".plans", d)); err != nil || !fi.IsDir() {
			t.Errorf("lane %s missing: %v", d, err)
		}
	}
	if !strings.Contains(fwtest.ReadRel(t, dir, "README.md"), "Preferred models") {
		t.Errorf("README.md does not explain the header")
	}
	gi := strings.Split(fwtest.ReadRel(t, dir, ".gitignore"), "\n")
	for _, line := range []string{"*.local.md", ".leases/"} {
		if !slices.Contains(gi, line) {
			t.Errorf(".gitignore lacks %q: %q", line, gi)
		}
	}
	// A second scaffold keeps everything and says so.
	r := fwtest.Run(t, dir, "scaffold", dir)
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stdout, "nothing to do") {
		t.Errorf("rescaffold: %v", r)
	}
	fwtest.Want(t, fwtest.Run(t, dir, "check", "--root", dir), 0)
}

func TestCheckReportsProblems(t *testing.T) {
	t.Parallel()
	t.Run("CleanTree", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t,
			fwtest.Plan{Rel: "completed/base.md"},
			fwtest.Plan{Rel: "bugs/b.md", Fields: "Priority: P1; Value: high; Preferred models: mid; Depends on: base"},
			fwtest.Plan{Rel: "features/f.md", Fields: "Preferred models: mid; Assignee: ai"},
			fwtest.Plan{Rel: "drafts/d.md"},
		)
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "f", "--agent-id", "a"), 0)
		r := fwtest.Run(t, dir, "check")
		fwtest.Want(t, r, 0)
		if !strings.HasPrefix(r.Stdout, "ok:") {
			t.Errorf("clean check: %v", r)
		}
	})
	header := func(line string) string {
		return "# Plan: a\n\n" + line + "\n- **Preferred models:** mid\n\n## Done when\n- x\n"
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		// each string must appear on one stdout line
		want [][]string
	}{
		{"StarBullet", func(t *testing.T, dir string) { fwtest.PutRaw(t, dir, "features/a.md", header("* **Value:** high")) },
			[][]string{{"features/a.md:3:", "bullet"}}},
		{"BoldKeyWithoutBullet", func(t *testing.T, dir string) { fwtest.PutRaw(t, dir, "features/a.md", header("**Priority:** P1")) },
			[][]string{{"features/a.md:3:", "bullet"}}},
		{"BadPriorityWord", func(t *testing.T, dir string) {
			fwtest.PutRaw(t, dir, "features/a.md", header("- **Priority:** banana"))
		},
			[][]string{{"features/a.md:3:", "banana"}}},
		{"MissingDependency", func(t *testing.T, dir string) {
			fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid; Depends on: ghost"}, time.Minute)
		}, [][]string{{"features/a.md", "ghost"}}},
		{"DependencyCycle", func(t *testing.T, dir string) {
			fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid; Depends on: b"}, time.Minute)
			fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "features/b.md", Fields: "Preferred models: mid; Depends on: a"}, time.Minute)
		}, [][]string{{"features/a.md", "cycle"}, {"features/b.md", "cycle"}}},
		{"DuplicateSlug", func(t *testing.T, dir string) {
			fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "bugs/x.md", Fields: "Preferred models: mid"}, time.Minute)
			fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "features/x.md", Fields: "Preferred models: mid"}, time.Minute)
		}, [][]string{{"bugs/x.md", "features/x.md"}}},
		{"CorruptLease", func(t *testing.T, dir string) {
			fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid"}, time.Minute)
			fwtest.PutRaw(t, dir, ".leases/features__a.md.json", "{not json")
			fwtest.Age(t, dir, ".leases/features__a.md.json") // not one being written
		}, [][]string{{".leases/features__a.md.json", "corrupt"}}},
		{"LeaseForMissingPlan", func(t *testing.T, dir string) {
			fwtest.PutLease(t, dir, "in-progress/ghost.md", fwtest.AnchorLease("in-progress/ghost.md", "w", 0, 600))
		}, [][]string{{".leases/in-progress__ghost.md.json", "in-progress/ghost.md"}}},
		{"InProgressWithoutLease", func(t *testing.T, dir string) {
			fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "in-progress/a.md", Fields: "Preferred models: mid"}, time.Minute)
		}, [][]string{{"in-progress/a.md", "lease"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := fwtest.NewTree(t)
			c.setup(t, dir)
			r := fwtest.Run(t, dir, "check")
			fwtest.Want(t, r, 1)
			lines := strings.Split(r.Stdout, "\n")
			for _, parts := range c.want {
				found := false
				for _, l := range lines {
					all := true
					for _, p := range parts {
						all = all && strings.Contains(l, p)
					}
					found = found || all
				}
				if !found {
					t.Errorf("no check line with all of %q:\n%s", parts, r.Stdout)
				}
			}
			if !strings.HasPrefix(r.Stderr, "fleetwatch: check:") {
				t.Errorf("check stderr summary: %q", r.Stderr)
			}
		})
	}
}

// anchor's named --slug: exact names (also *.local.md), own in-progress
// first, several hits are ambiguous, a foreign in-progress plan is not found.
func TestVerbsCheckOwnershipUnlessForced(t *testing.T) {
	t.Parallel()
	cases := []struct {
		verb []string
		dest string
	}{
		{[]string{"release", "x"}, "features/x.md"},
		{[]string{"park", "x", "--to", "blocked"}, "blocked/x.md"},
		{[]string{"return", "x", "--to", "bugs"}, "bugs/x.md"},
		{[]string{"complete", "x"}, "completed/x.md"},
		{[]string{"complete", "x", "--to", "review-needed"}, "review-needed/x.md"},
		{[]string{"work-once", "--slug", "x", "--park", "ambiguous"}, "ambiguous/x.md"},
		{[]string{"work-once", "--slug", "x", "--return-ready"}, "features/x.md"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.verb, " "), func(t *testing.T) {
			t.Parallel()
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/x.md", Fields: "Preferred models: mid"})
			fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "x", "--agent-id", "owner"), 0)
			r := fwtest.Run(t, dir, append(c.verb, "--agent-id", "intruder")...)
			fwtest.Want(t, r, 2)
			if !fwtest.Exists(dir, "in-progress/x.md") || fwtest.ActiveOwner(t, dir, "in-progress/x.md") != "owner" {
				t.Fatalf("non-owner %v took effect", c.verb)
			}
			r = fwtest.Run(t, dir, append(c.verb, "--agent-id", "intruder", "--force")...)
			fwtest.Want(t, r, 0)
			if !fwtest.Exists(dir, c.dest) || fwtest.Exists(dir, "in-progress/x.md") || fwtest.LeaseOf(t, dir, "in-progress/x.md") != nil {
				t.Fatalf("forced %v: %v", c.verb, r)
			}
		})
	}
	t.Run("OwnerNeedsNoForce", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/x.md", Fields: "Preferred models: mid"})
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "x", "--agent-id", "owner"), 0)
		fwtest.Want(t, fwtest.Run(t, dir, "complete", "in-progress/x.md", "--agent-id", "owner"), 0)
		if !fwtest.Exists(dir, "completed/x.md") {
			t.Fatal("not completed")
		}
	})
}

// anchor: a --recover, --park or --return-ready slug that names no plan is
// "nothing to do" (exit 1), not an error.
func TestWorkOnceNamedVerbsMissingSlugExit1(t *testing.T) {
	dir := fwtest.NewTree(t)
	for _, args := range [][]string{
		{"work-once", "--recover", "--slug", "nope"},
		{"work-once", "--park", "blocked", "--slug", "nope"},
		{"work-once", "--return-ready", "--slug", "nope"},
	} {
		if r := fwtest.Run(t, dir, args...); r.Code != 1 || !strings.Contains(r.Stderr, `"nope"`) {
			t.Errorf("%v: %v", args, r)
		}
	}
}

// What a run finds but leaves to a person reaches monitors in --json too.
