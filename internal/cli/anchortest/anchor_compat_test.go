package anchortest

// CLI tests for the behaviours anchor's own test suite asserts
// (/work/shared/anchor/TESTS.md items 1–17 and 56–78) that SPEC.md keeps,
// plus the --list/--json, event log, promote, scaffold and check contracts.
// Item numbers are given in comments as "TESTS n".

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// ---- helpers shared by anchor_compat_test.go, differences_test.go and badinput_test.go ----

// ---- work-once: TESTS 1–17 ----

// TESTS 1 and 15.
func TestWorkOnceListShowsReadyPlansWithFit(t *testing.T) {
	t.Parallel()
	dir := newTree(t,
		plan{rel: "features/a.md", fields: "Value: medium; Preferred models: mid"},
		plan{rel: "bugs/b.md", fields: "Value: medium; Preferred models: mid"},
	)
	r := fw(t, dir, "work-once", "--list", "--tier", "mid", "--agent-id", "list-me")
	want(t, r, 0)
	for _, s := range []string{"features/a.md", "bugs/b.md", "good"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("--list stdout lacks %q:\n%s", s, r.stdout)
		}
	}
	if exists(dir, "in-progress/a.md") || !exists(dir, "features/a.md") {
		t.Error("--list moved a plan")
	}
}

// TESTS 2, 3, 4, 8, 14: bare picks and what they may not take.
func TestWorkOnceBarePick(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		plans []plan
		args  []string
		code  int
		// claimed is the rel that must now be in in-progress/ (code 0);
		// stays lists rels that must not have moved.
		claimed string
		stays   []string
	}{
		{name: "EmptyReadyLanesExit1", args: []string{"--tier", "mid", "--agent-id", "t"}, code: 1},
		{name: "SkipsUnderqualified",
			plans: []plan{{rel: "features/hard.md", fields: "Value: medium; Preferred models: frontier"}},
			args:  []string{"--tier", "small", "--agent-id", "tiny"}, code: 1, stays: []string{"features/hard.md"}},
		{name: "NoFitCheckTakesUnderqualified",
			plans: []plan{{rel: "features/hard.md", fields: "Value: medium; Preferred models: frontier"}},
			args:  []string{"--tier", "small", "--no-fit-check", "--agent-id", "s"}, code: 0, claimed: "in-progress/hard.md"},
		{name: "SkipsPersonsPlan",
			plans: []plan{{rel: "features/hers.md", fields: "Value: medium; Preferred models: mid; Assignee: alice"}},
			args:  []string{"--tier", "mid", "--agent-id", "w1"}, code: 1, stays: []string{"features/hers.md"}},
		{name: "SkipsPersonsPlanEvenWithBothOverrides",
			plans: []plan{{rel: "features/hers.md", fields: "Preferred models: mid; Assignee: alice"}},
			args:  []string{"--tier", "mid", "--no-fit-check", "--no-dep-check", "--agent-id", "w1"}, code: 1, stays: []string{"features/hers.md"}},
		{name: "SkipsUnmetDependency",
			plans: []plan{{rel: "features/app.md", fields: "Preferred models: mid; Depends on: nope"}},
			args:  []string{"--tier", "mid", "--agent-id", "w1"}, code: 1, stays: []string{"features/app.md"}},
		{name: "NoDepCheckTakesUnmetDependency",
			plans: []plan{{rel: "features/app.md", fields: "Preferred models: mid; Depends on: nope"}},
			args:  []string{"--tier", "mid", "--no-dep-check", "--agent-id", "w1"}, code: 0, claimed: "in-progress/app.md"},
		{name: "ExecutorHeavyIsMid", // TESTS 16
			plans: []plan{{rel: "features/m.md", fields: "Preferred models: mid"}, {rel: "features/r.md", fields: "Preferred models: reasoner"}},
			args:  []string{"--tier", "executor-heavy", "--agent-id", "x"}, code: 0, claimed: "in-progress/m.md", stays: []string{"features/r.md"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := newTree(t, c.plans...)
			r := fw(t, dir, append([]string{"work-once", "--once"}, c.args...)...)
			want(t, r, c.code)
			if c.claimed != "" {
				if !isPlanPath(dir, lastLine(r.stdout), c.claimed) || !exists(dir, c.claimed) {
					t.Errorf("want %s claimed and printed: %v", c.claimed, r)
				}
			}
			for _, s := range c.stays {
				if !exists(dir, s) {
					t.Errorf("%s moved: %v", s, r)
				}
			}
		})
	}
}

// TESTS 5 and 6.
func TestWorkOnceSlugRefusesPersonsPlanUnlessAllowAssigned(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/hers.md", fields: "Value: medium; Preferred models: mid; Assignee: alice"})
	r := fw(t, dir, "work-once", "--slug", "hers", "--tier", "mid", "--agent-id", "w1")
	want(t, r, 1)
	if !strings.Contains(r.stderr, "assigned to alice") || !exists(dir, "features/hers.md") {
		t.Fatalf("want refusal naming alice, plan in place: %v", r)
	}
	r = fw(t, dir, "work-once", "--slug", "hers", "--tier", "mid", "--agent-id", "w1", "--allow-assigned")
	want(t, r, 0)
	if !exists(dir, "in-progress/hers.md") || exists(dir, "features/hers.md") {
		t.Fatalf("--allow-assigned did not claim: %v", r)
	}
}

// TESTS 7 and 8.
func TestWorkOnceClaimMovesPlanAndPrintsInProgressPath(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/a.md", fields: "Value: medium; Preferred models: mid"})
	r := fw(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "w1")
	want(t, r, 0)
	if !strings.HasSuffix(lastLine(r.stdout), "in-progress/a.md") || !isPlanPath(dir, lastLine(r.stdout), "in-progress/a.md") {
		t.Errorf("last stdout line is not the absolute in-progress path: %q", r.stdout)
	}
	if !exists(dir, "in-progress/a.md") || exists(dir, "features/a.md") {
		t.Errorf("plan not moved")
	}
	l := leaseOf(t, dir, "in-progress/a.md")
	if l == nil || l["agent_id"] != "w1" || l["plan"] != "in-progress/a.md" || l["origin"] != "features/a.md" {
		t.Errorf("in-progress lease: %v", l)
	}
	if leaseOf(t, dir, "features/a.md") != nil {
		t.Errorf("ready-path lease left behind")
	}
	want(t, fw(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "w2"), 1)
}

// TESTS 9 and 58: a bare pick never resumes the worker's own in-progress plan.
func TestWorkOnceBarePickNeverResumesOwnInProgress(t *testing.T) {
	t.Parallel()
	dir := newTree(t,
		plan{rel: "features/a.md", fields: "Value: medium; Preferred models: mid"},
		plan{rel: "features/b.md", fields: "Value: medium; Preferred models: mid"},
	)
	r := fw(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "w1")
	want(t, r, 0)
	if !strings.HasSuffix(lastLine(r.stdout), "in-progress/a.md") {
		t.Fatalf("first claim: %v", r)
	}
	r = fw(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "w1")
	want(t, r, 0)
	if !strings.HasSuffix(lastLine(r.stdout), "in-progress/b.md") || strings.Contains(r.stdout, "in-progress/a.md") {
		t.Fatalf("second claim must take b only: %v", r)
	}
	// Nothing ready is left: the worker's own two claims are not picked.
	want(t, fw(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "w1"), 1)
}

// TESTS 10 and 75.
func TestWorkOnceHeartbeatExtendsOwnLease(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/a.md", fields: "Preferred models: mid"})
	want(t, fw(t, dir, "work-once", "--once", "--agent-id", "w1", "--lease-ttl", "60"), 0)
	before := leaseOf(t, dir, "in-progress/a.md")
	r := fw(t, dir, "work-once", "--heartbeat", "in-progress/a.md", "--agent-id", "w1", "--lease-ttl", "120")
	want(t, r, 0)
	if strings.TrimSpace(r.stdout) != "in-progress/a.md" {
		t.Errorf("heartbeat prints the rel, got %q", r.stdout)
	}
	after := leaseOf(t, dir, "in-progress/a.md")
	if after["agent_id"] != "w1" || after["expires_at"].(float64) <= before["expires_at"].(float64) {
		t.Errorf("lease not extended: before %v after %v", before, after)
	}
	if after["claimed_at"] != before["claimed_at"] || after["origin"] != "features/a.md" {
		t.Errorf("heartbeat must keep claimed_at and origin: before %v after %v", before, after)
	}
}

// TESTS 11 and 12.
func TestWorkOnceRecoverOnlyTakesExpiredLease(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/a.md", fields: "Preferred models: mid"})
	want(t, fw(t, dir, "work-once", "--once", "--agent-id", "w1"), 0)
	// The relative --path resolves against .plans/.
	r := fw(t, dir, "work-once", "--recover", "--path", "in-progress/a.md", "--agent-id", "w2")
	want(t, r, 2)
	if activeOwner(t, dir, "in-progress/a.md") != "w1" {
		t.Fatalf("recover of an active lease changed the owner")
	}
	putLease(t, dir, "in-progress/a.md", anchorLease("in-progress/a.md", "w1", 100, 90))
	r = fw(t, dir, "work-once", "--recover", "--path", "in-progress/a.md", "--agent-id", "w2")
	want(t, r, 0)
	if !isPlanPath(dir, lastLine(r.stdout), "in-progress/a.md") {
		t.Errorf("recover prints the plan path: %v", r)
	}
	if activeOwner(t, dir, "in-progress/a.md") != "w2" {
		t.Fatalf("owner after recover: %v", leaseOf(t, dir, "in-progress/a.md"))
	}
	// The origin the stale lease lacked comes back from the claim event.
	if l := leaseOf(t, dir, "in-progress/a.md"); l["origin"] != "features/a.md" {
		t.Errorf("origin after recover: %v", l)
	}
}

// TESTS 13 (and 52/53): named paths under lanes that are not ready refuse.
func TestWorkOncePathRefusesNonReadyLanes(t *testing.T) {
	t.Parallel()
	for _, lane := range []string{"drafts", "completed", "review-needed", "ambiguous", "blocked"} {
		t.Run(lane, func(t *testing.T) {
			t.Parallel()
			rel := lane + "/nope.md"
			dir := newTree(t, plan{rel: rel, fields: "Preferred models: mid"})
			r := fw(t, dir, "work-once", "--path", filepath.Join(dir, ".plans", rel), "--tier", "mid", "--agent-id", "w")
			want(t, r, 2)
			if !exists(dir, rel) || !strings.Contains(r.stderr, lane) {
				t.Fatalf("want refusal naming %s, plan in place: %v", lane, r)
			}
		})
	}
}

// TESTS 16: registry tier words map to fit tiers.
func TestWorkOnceRegistryTiersMapToFitTiers(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/m.md", fields: "Preferred models: mid"})
	for tier, fit := range map[string]string{"executor-heavy": "mid", "executor": "mid", "detached": "mid", "swarm": "small", "reasoner": "reasoner", "Frontier": "frontier"} {
		m := workOnceJSON(t, dir, "--tier", tier, "--agent-id", "x")
		if w, _ := m["worker"].(map[string]any); w["tier"] != fit {
			t.Errorf("--tier %s: worker.tier %v, want %s", tier, w["tier"], fit)
		}
	}
}

// TESTS 17.
func TestWorkOnceParkByAbsolutePath(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/thin.md", fields: "Preferred models: mid"})
	r := fw(t, dir, "work-once", "--path", filepath.Join(dir, ".plans", "features", "thin.md"), "--park", "ambiguous", "--agent-id", "w")
	want(t, r, 0)
	if !exists(dir, "ambiguous/thin.md") || exists(dir, "features/thin.md") || !strings.Contains(r.stdout, "ambiguous") {
		t.Fatalf("park: %v", r)
	}
}

// ---- plan_select leases: TESTS 56–61 ----

// TESTS 56 and 57: a leased plan is skipped by every bare pick, its holder's too.
func TestWorkOnceBarePickSkipsLeasedPlan(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"claimed", "ready-path lease"} {
		for _, picker := range []string{"agent-b", "agent-a"} {
			t.Run(how+"/"+picker, func(t *testing.T) {
				t.Parallel()
				// taken is older, so it would be picked first if not leased.
				dir := newTree(t,
					plan{rel: "features/taken.md", fields: "Preferred models: mid"},
					plan{rel: "features/ready.md", fields: "Preferred models: mid"},
				)
				if how == "claimed" {
					want(t, fw(t, dir, "work-once", "--slug", "taken", "--agent-id", "agent-a", "--lease-ttl", "600"), 0)
				} else {
					putLease(t, dir, "features/taken.md", anchorLease("features/taken.md", "agent-a", 0, 600))
				}
				r := fw(t, dir, "work-once", "--once", "--agent-id", picker)
				want(t, r, 0)
				if !strings.HasSuffix(lastLine(r.stdout), "in-progress/ready.md") {
					t.Fatalf("want ready.md: %v", r)
				}
			})
		}
	}
}

// TESTS 58.
func TestWorkOnceNothingLeftForOwnerOfInProgress(t *testing.T) {
	t.Parallel()
	dir := newTree(t,
		plan{rel: "features/ready.md", fields: "Preferred models: mid"},
		plan{rel: "features/taken.md", fields: "Preferred models: mid"},
	)
	want(t, fw(t, dir, "work-once", "--slug", "taken", "--agent-id", "agent-a"), 0)
	want(t, fw(t, dir, "work-once", "--slug", "ready", "--agent-id", "agent-b"), 0)
	want(t, fw(t, dir, "work-once", "--once", "--agent-id", "agent-a"), 1)
}

// TESTS 59, 60, 61, 66, 67, 77, 78: naming an in-progress plan.
func TestWorkOnceNamedInProgressNeedsOwnActiveLease(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/y.md", fields: "Preferred models: mid"})
	want(t, fw(t, dir, "work-once", "--slug", "y", "--agent-id", "agent-a", "--lease-ttl", "60"), 0)
	before := leaseOf(t, dir, "in-progress/y.md")

	// 61/66: another agent is refused with "owned by".
	r := fw(t, dir, "work-once", "--path", "in-progress/y.md", "--agent-id", "agent-b")
	want(t, r, 2)
	if !strings.Contains(r.stderr, "owned by") || !strings.Contains(r.stderr, "agent-a") {
		t.Errorf("want 'owned by agent-a': %v", r)
	}
	// 59/67: the owner resumes it, by path or slug.
	r = fw(t, dir, "work-once", "--path", "in-progress/y.md", "--agent-id", "agent-a", "--lease-ttl", "120")
	want(t, r, 0)
	if !isPlanPath(dir, lastLine(r.stdout), "in-progress/y.md") || activeOwner(t, dir, "in-progress/y.md") != "agent-a" {
		t.Errorf("resume: %v", r)
	}
	if after := leaseOf(t, dir, "in-progress/y.md"); after["expires_at"].(float64) < before["expires_at"].(float64) {
		t.Errorf("resume shortened the lease: %v → %v", before, after)
	}
	r = fw(t, dir, "work-once", "--slug", "y", "--agent-id", "agent-a")
	want(t, r, 0)
	if !isPlanPath(dir, lastLine(r.stdout), "in-progress/y.md") {
		t.Errorf("resume by slug: %v", r)
	}
	// A foreign in-progress plan is not found by slug (exit 1).
	want(t, fw(t, dir, "work-once", "--slug", "y", "--agent-id", "agent-b"), 1)

	// 60/77: anchor's --release drops the lease and strands the plan; with
	// no lease nobody may name it, not even the previous owner.
	if err := os.Remove(leaseFilePath(dir, "in-progress/y.md")); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"agent-a", "agent-b"} {
		r = fw(t, dir, "work-once", "--path", "in-progress/y.md", "--agent-id", agent)
		want(t, r, 2)
		if !strings.Contains(r.stderr, "no active lease") {
			t.Errorf("%s: want 'no active lease': %v", agent, r)
		}
	}
	// 78: recover takes it.
	r = fw(t, dir, "work-once", "--recover", "--slug", "y", "--agent-id", "agent-b")
	want(t, r, 0)
	if activeOwner(t, dir, "in-progress/y.md") != "agent-b" {
		t.Errorf("owner after recover: %v", leaseOf(t, dir, "in-progress/y.md"))
	}
}

// ---- plan_lease: TESTS 62–78 ----

// TESTS 62 and 63: anchor's ready-path lease (mid-claim) is respected.
func TestAnchorReadyPathLeaseBlocksOtherClaimers(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/foo.md", fields: "Preferred models: mid"})
	putLease(t, dir, "features/foo.md", anchorLease("features/foo.md", "agent-a", 0, 60))

	r := fw(t, dir, "work-once", "--list", "--agent-id", "agent-b")
	want(t, r, 0)
	if !strings.Contains(r.stderr, "#   features/foo.md  agent=agent-a") {
		t.Errorf("active leases on stderr lack features/foo.md: %v", r)
	}
	m := workOnceJSON(t, dir, "--agent-id", "agent-b")
	p := jsonPlan(t, m, "features/foo.md")
	if l, _ := p["lease"].(map[string]any); l == nil || l["agent_id"] != "agent-a" || l["expired"] != false || p["eligible"] != false {
		t.Errorf("JSON for leased plan: %v", p)
	}

	want(t, fw(t, dir, "work-once", "--once", "--agent-id", "agent-b"), 1)
	r = fw(t, dir, "work-once", "--slug", "foo", "--agent-id", "agent-b")
	want(t, r, 1)
	if !strings.Contains(r.stderr, "already claimed") || !strings.Contains(r.stderr, "agent-a") {
		t.Errorf("want 'already claimed by agent-a': %v", r)
	}
	if !exists(dir, "features/foo.md") || activeOwner(t, dir, "features/foo.md") != "agent-a" {
		t.Errorf("anchor's lease or plan disturbed")
	}
}

// TESTS 64 and 65.
func TestClaimWritesAnchorLeaseWithOrigin(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/foo.md", fields: "Preferred models: mid"})
	r := fw(t, dir, "work-once", "--slug", "foo", "--agent-id", "agent-a")
	want(t, r, 0)
	if !isPlanPath(dir, lastLine(r.stdout), "in-progress/foo.md") || exists(dir, "features/foo.md") || !exists(dir, "in-progress/foo.md") {
		t.Fatalf("claim: %v", r)
	}
	l := leaseOf(t, dir, "in-progress/foo.md")
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
	ra := fw(t, dir, "work-once", "--list", "--agent-id", "agent-a")
	rb := fw(t, dir, "work-once", "--list", "--agent-id", "agent-b")
	if !strings.Contains(ra.stdout, "in-progress/foo.md\t") {
		t.Errorf("agent-a's list lacks its in-progress plan: %v", ra)
	}
	if strings.Contains(rb.stdout, "in-progress/foo.md") || !strings.Contains(rb.stderr, "#   in-progress/foo.md  agent=agent-a") {
		t.Errorf("agent-b sees agent-a's plan as its own: %v", rb)
	}
}

// TESTS 68 and 69: an expired ready-path lease is no lease.
func TestExpiredReadyPathLeaseIsReclaimable(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/foo.md", fields: "Preferred models: mid"})
	putRaw(t, dir, ".leases/features__foo.md.json", `{"plan":"features/foo.md","agent_id":"agent-a","claimed_at":1,"expires_at":2}`)
	r := fw(t, dir, "work-once", "--list", "--agent-id", "agent-b")
	want(t, r, 0)
	if strings.Contains(r.stderr, "agent=agent-a") || !strings.Contains(r.stdout, "features/foo.md\tfeatures\tP2\tmedium\tmid\tgood\tnone\tai\t-\n") {
		t.Errorf("expired lease still counts: %v", r)
	}
	r = fw(t, dir, "work-once", "--slug", "foo", "--agent-id", "agent-b")
	want(t, r, 0)
	if activeOwner(t, dir, "in-progress/foo.md") != "agent-b" {
		t.Errorf("owner: %v", leaseOf(t, dir, "in-progress/foo.md"))
	}
}

// TESTS 70: releasing one's own lease leaves no active lease.
func TestReleaseOwnLease(t *testing.T) {
	t.Parallel()
	t.Run("ReadyPath", func(t *testing.T) {
		t.Parallel()
		dir := newTree(t, plan{rel: "features/foo.md", fields: "Preferred models: mid"})
		putLease(t, dir, "features/foo.md", anchorLease("features/foo.md", "agent-a", 0, 60))
		r := fw(t, dir, "work-once", "--release", "features/foo.md", "--agent-id", "agent-a")
		want(t, r, 0)
		if !strings.Contains(r.stdout, "released features/foo.md") || leaseOf(t, dir, "features/foo.md") != nil || !exists(dir, "features/foo.md") {
			t.Errorf("release: %v", r)
		}
	})
	t.Run("InProgress", func(t *testing.T) {
		t.Parallel()
		dir := newTree(t, plan{rel: "features/foo.md", fields: "Preferred models: mid"})
		want(t, fw(t, dir, "work-once", "--slug", "foo", "--agent-id", "agent-a"), 0)
		r := fw(t, dir, "work-once", "--release", "in-progress/foo.md", "--agent-id", "agent-a")
		want(t, r, 0)
		if !strings.Contains(r.stdout, "released in-progress/foo.md") {
			t.Errorf("release output: %v", r)
		}
		// Deliberate difference: the plan goes back to its origin lane.
		if leaseOf(t, dir, "in-progress/foo.md") != nil || !exists(dir, "features/foo.md") || exists(dir, "in-progress/foo.md") {
			t.Errorf("after release: %v", r)
		}
	})
	t.Run("NoLease", func(t *testing.T) {
		t.Parallel()
		dir := newTree(t, plan{rel: "features/foo.md", fields: "Preferred models: mid"})
		r := fw(t, dir, "work-once", "--release", "features/foo.md", "--agent-id", "agent-a")
		want(t, r, 0)
		if !strings.Contains(r.stdout, "no lease features/foo.md") {
			t.Errorf("anchor prints 'no lease REL': %v", r)
		}
	})
}

// TESTS 71–74: park and return, through the operator verbs.
func TestParkAndReturnVerbs(t *testing.T) {
	t.Parallel()
	t.Run("ParkReadyPlan", func(t *testing.T) { // 71
		t.Parallel()
		dir := newTree(t, plan{rel: "features/half.md", fields: "Preferred models: mid"})
		r := fw(t, dir, "park", "half", "--to", "ambiguous")
		want(t, r, 0)
		if !isPlanPath(dir, lastLine(r.stdout), "ambiguous/half.md") || exists(dir, "features/half.md") {
			t.Fatalf("park: %v", r)
		}
	})
	t.Run("ParkClaimedPlanDropsLease", func(t *testing.T) { // 72
		t.Parallel()
		dir := newTree(t, plan{rel: "bugs/stuck.md", fields: "Preferred models: mid"})
		want(t, fw(t, dir, "work-once", "--slug", "stuck", "--agent-id", "agent-a"), 0)
		r := fw(t, dir, "park", "in-progress/stuck.md", "--to", "blocked", "--agent-id", "agent-a")
		want(t, r, 0)
		if !isPlanPath(dir, lastLine(r.stdout), "blocked/stuck.md") || leaseOf(t, dir, "in-progress/stuck.md") != nil || exists(dir, "in-progress/stuck.md") {
			t.Fatalf("park: %v", r)
		}
	})
	t.Run("ReturnClaimedBugToBugs", func(t *testing.T) { // 73
		t.Parallel()
		dir := newTree(t, plan{rel: "bugs/b.md", fields: "Preferred models: mid"})
		want(t, fw(t, dir, "work-once", "--slug", "b", "--agent-id", "agent-a"), 0)
		r := fw(t, dir, "return", "in-progress/b.md", "--agent-id", "agent-a")
		want(t, r, 0)
		if !isPlanPath(dir, lastLine(r.stdout), "bugs/b.md") || !exists(dir, "bugs/b.md") || leaseOf(t, dir, "in-progress/b.md") != nil {
			t.Fatalf("return: %v", r)
		}
	})
	t.Run("ReturnParkedToTargetLane", func(t *testing.T) { // 74
		t.Parallel()
		dir := newTree(t, plan{rel: "features/x.md", fields: "Preferred models: mid"})
		want(t, fw(t, dir, "park", "features/x.md", "--to", "blocked"), 0)
		r := fw(t, dir, "return", "blocked/x.md", "--to", "features")
		want(t, r, 0)
		if !isPlanPath(dir, lastLine(r.stdout), "features/x.md") || exists(dir, "blocked/x.md") {
			t.Fatalf("return: %v", r)
		}
	})
	t.Run("WorkOnceReturnReadyTargetLane", func(t *testing.T) {
		t.Parallel()
		dir := newTree(t, plan{rel: "features/x.md", fields: "Preferred models: mid"})
		want(t, fw(t, dir, "work-once", "--slug", "x", "--park", "blocked"), 0)
		r := fw(t, dir, "work-once", "--slug", "x", "--return-ready", "--target-lane", "bugs")
		want(t, r, 0)
		if !exists(dir, "bugs/x.md") || exists(dir, "blocked/x.md") {
			t.Fatalf("return-ready: %v", r)
		}
	})
	t.Run("ParkClaimedByOtherRefused", func(t *testing.T) {
		t.Parallel()
		dir := newTree(t, plan{rel: "features/x.md", fields: "Preferred models: mid"})
		want(t, fw(t, dir, "work-once", "--slug", "x", "--agent-id", "agent-a"), 0)
		r := fw(t, dir, "park", "in-progress/x.md", "--to", "blocked", "--agent-id", "agent-b")
		want(t, r, 2)
		if !exists(dir, "in-progress/x.md") || activeOwner(t, dir, "in-progress/x.md") != "agent-a" {
			t.Fatalf("park by non-owner moved the plan: %v", r)
		}
	})
}

// TESTS 76: a renew by another agent fails naming the owner.
func TestHeartbeatByOtherAgentNamesOwner(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/foo.md", fields: "Preferred models: mid"})
	want(t, fw(t, dir, "work-once", "--slug", "foo", "--agent-id", "agent-a", "--lease-ttl", "60"), 0)
	before := leaseOf(t, dir, "in-progress/foo.md")
	r := fw(t, dir, "work-once", "--heartbeat", "in-progress/foo.md", "--agent-id", "agent-b")
	want(t, r, 2)
	if !strings.Contains(r.stderr, "agent-a") {
		t.Errorf("want message naming agent-a: %v", r)
	}
	if after := leaseOf(t, dir, "in-progress/foo.md"); after["agent_id"] != "agent-a" || after["expires_at"] != before["expires_at"] {
		t.Errorf("lease changed: %v → %v", before, after)
	}
}

// TESTS 78 through the operator verb.
func TestRecoverVerbTakesUnleasedInProgressPlan(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "bugs/foo.md", fields: "Preferred models: mid"})
	want(t, fw(t, dir, "work-once", "--slug", "foo", "--agent-id", "agent-a"), 0)
	if err := os.Remove(leaseFilePath(dir, "in-progress/foo.md")); err != nil {
		t.Fatal(err)
	}
	r := fw(t, dir, "recover", "in-progress/foo.md", "--agent-id", "agent-b")
	want(t, r, 0)
	if activeOwner(t, dir, "in-progress/foo.md") != "agent-b" {
		t.Fatalf("owner after recover: %v", leaseOf(t, dir, "in-progress/foo.md"))
	}
	// A second recover by another agent is refused: the lease is active.
	want(t, fw(t, dir, "recover", "foo", "--agent-id", "agent-c"), 2)
	// Its release returns the plan to bugs/, where it came from.
	want(t, fw(t, dir, "release", "foo", "--agent-id", "agent-b"), 0)
	if !exists(dir, "bugs/foo.md") {
		t.Errorf("released plan not back in bugs/")
	}
}

// ---- --list, --list --json, --max-plans ----

// listFixture is a tree seen by agent "me": its own claim, another agent's,
// an expired one, a ready-path lease from anchor, and ready plans of every
// shape the list distinguishes.
func listFixture(t *testing.T) string {
	t.Helper()
	dir := newTree(t,
		plan{rel: "completed/done-dep.md"},
		plan{rel: "bugs/bb.md", fields: "Priority: P1; Preferred models: mid"},
		plan{rel: "features/f1.md", fields: "Preferred models: mid; Depends on: gone-dep, done-dep"},
		plan{rel: "features/f2.md", fields: "Preferred models: reasoner; Assignee: alice — owns it"},
		plan{rel: "features/f3.md", fields: "Value: low; Preferred models: small, mid; Depends on: done-dep"},
		plan{rel: "features/f4.md", fields: "Preferred models: mid"},
		plan{rel: "features/f5.md", fields: "Value: low; Preferred models: Claude Sonnet 5"},
		plan{rel: "features/f6.md", fields: "Value: low; Preferred models: mid; Depends on: bb"},
		plan{rel: "features/mine.md", fields: "Preferred models: mid"},
		plan{rel: "features/theirs.md", fields: "Preferred models: mid"},
		plan{rel: "in-progress/stale.md", fields: "Preferred models: mid"},
	)
	want(t, fw(t, dir, "work-once", "--slug", "mine", "--agent-id", "me"), 0)
	want(t, fw(t, dir, "work-once", "--slug", "theirs", "--agent-id", "other"), 0)
	putLease(t, dir, "features/f4.md", anchorLease("features/f4.md", "anchor-w", 0, 600))
	putLease(t, dir, "in-progress/stale.md", anchorLease("in-progress/stale.md", "gone-agent", 500, 100))
	return dir
}

func TestListTSVColumns(t *testing.T) {
	t.Parallel()
	dir := listFixture(t)
	r := fw(t, dir, "work-once", "--list", "--tier", "mid", "--agent-id", "me")
	want(t, r, 0)
	wantOut := strings.Join([]string{
		"path\tlane\tpriority\tvalue\tpreferred\tfit\tdeps\tassignee\towner",
		"in-progress/mine.md\tin-progress\tP2\tmedium\tmid\tgood\tnone\tai\tme",
		"bugs/bb.md\tbugs\tP1\tmedium\tmid\tgood\tnone\tai\t-",
		"features/f1.md\tfeatures\tP2\tmedium\tmid\tgood\tUNMET:gone-dep\tai\t-",
		"features/f2.md\tfeatures\tP2\tmedium\treasoner\tunderqualified\tnone\talice\t-",
		"features/f4.md\tfeatures\tP2\tmedium\tmid\tgood\tnone\tai\tanchor-w",
		"features/f3.md\tfeatures\tP2\tlow\tsmall, mid\tgood\tmet:done-dep\tai\t-",
		"features/f5.md\tfeatures\tP2\tlow\tClaude Sonnet 5\tunknown\tnone\tai\t-",
		"features/f6.md\tfeatures\tP2\tlow\tmid\tgood\tUNMET:bb\tai\t-",
	}, "\n") + "\n"
	if r.stdout != wantOut {
		t.Errorf("--list stdout:\n%s\nwant:\n%s", r.stdout, wantOut)
	}
	for _, s := range []string{
		"# in-progress (other agents — ignore):\n",
		"#   in-progress/theirs.md  agent=other\n",
		"#   in-progress/stale.md  agent=gone-agent\n",
		"# active leases:\n#   features/f4.md  agent=anchor-w\n#   in-progress/mine.md  agent=me\n#   in-progress/theirs.md  agent=other\n",
	} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("--list stderr lacks %q:\n%s", s, r.stderr)
		}
	}
	if strings.Index(r.stderr, "# in-progress (other agents") > strings.Index(r.stderr, "# active leases:") {
		t.Errorf("the in-progress section comes before the active leases:\n%s", r.stderr)
	}
}

func TestListEmptyTree(t *testing.T) {
	t.Parallel()
	dir := newTree(t)
	r := fw(t, dir, "work-once", "--list", "--agent-id", "me")
	want(t, r, 0)
	if strings.TrimSpace(r.stdout) != "(no ready plans under bugs/ or features/; no owned in-progress)" {
		t.Errorf("empty list: %v", r)
	}
}

// anchor lists the agent's own in-progress plans first, by name.
func TestListOwnInProgressFirstByName(t *testing.T) {
	t.Parallel()
	dir := newTree(t,
		plan{rel: "features/ready.md", fields: "Priority: P1; Value: high; Preferred models: mid"},
		plan{rel: "features/zeta.md", fields: "Priority: P1; Value: high; Preferred models: mid"},
		plan{rel: "bugs/alpha.md", fields: "Priority: P3; Value: low; Preferred models: mid"},
	)
	want(t, fw(t, dir, "work-once", "--slug", "zeta", "--agent-id", "me"), 0)
	want(t, fw(t, dir, "work-once", "--slug", "alpha", "--agent-id", "me"), 0)
	r := fw(t, dir, "work-once", "--list", "--agent-id", "me")
	want(t, r, 0)
	var paths []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		paths = append(paths, strings.SplitN(line, "\t", 2)[0])
	}
	if wantPaths := []string{"in-progress/alpha.md", "in-progress/zeta.md", "features/ready.md"}; !slices.Equal(paths, wantPaths) {
		t.Errorf("--list rows %v, want %v", paths, wantPaths)
	}
}

func TestListJSONShape(t *testing.T) {
	t.Parallel()
	dir := listFixture(t)
	m := workOnceJSON(t, dir, "--tier", "mid", "--agent-id", "me")
	for _, k := range []string{"worker", "plans", "warnings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("top-level key %q missing", k)
		}
	}
	if _, ok := m["warnings"].([]any); !ok {
		t.Errorf("warnings must be a list, got %#v", m["warnings"])
	}
	w, _ := m["worker"].(map[string]any)
	if w["agent_id"] != "me" || w["tier"] != "mid" {
		t.Errorf("worker: %v", w)
	}
	if _, ok := w["model"]; !ok {
		t.Errorf("worker.model missing: %v", w)
	}
	plans, _ := m["plans"].([]any)
	keys := []string{"rel", "slug", "lane", "title", "priority", "value", "preferred", "assignee", "agent_assignable", "fit", "deps", "lease", "eligible", "rank"}
	var eligible []string
	for i, p := range plans {
		pm := p.(map[string]any)
		for _, k := range keys {
			if _, ok := pm[k]; !ok {
				t.Errorf("plans[%d] (%v) lacks %q", i, pm["rel"], k)
			}
		}
		if pm["eligible"] == true {
			eligible = append(eligible, pm["rel"].(string))
			if rank, _ := pm["rank"].(float64); int(rank) != len(eligible) {
				t.Errorf("%v: rank %v, want %d", pm["rel"], pm["rank"], len(eligible))
			}
		} else if pm["rank"] != nil {
			t.Errorf("%v: ineligible plan has rank %v", pm["rel"], pm["rank"])
		}
	}
	if wantE := []string{"bugs/bb.md", "features/f3.md", "features/f5.md"}; !slices.Equal(eligible, wantE) {
		t.Errorf("eligible in rank order %v, want %v", eligible, wantE)
	}

	bb := jsonPlan(t, m, "bugs/bb.md")
	if bb["slug"] != "bb" || bb["lane"] != "bugs" || bb["title"] != "Plan: bb" || bb["priority"] != "P1" || bb["value"] != "medium" ||
		bb["assignee"] != "" || bb["agent_assignable"] != true || bb["fit"] != "good" || bb["lease"] != nil {
		t.Errorf("bugs/bb.md: %v", bb)
	}
	if d := bb["deps"].(map[string]any); d["met"] != true || len(d["unmet"].([]any)) != 0 {
		t.Errorf("bugs/bb.md deps: %v", d)
	}
	f1 := jsonPlan(t, m, "features/f1.md")
	d := f1["deps"].(map[string]any)
	unmet, _ := d["unmet"].([]any)
	if d["met"] != false || len(unmet) != 1 || unmet[0].(map[string]any)["slug"] != "gone-dep" || unmet[0].(map[string]any)["reason"] != "missing" {
		t.Errorf("features/f1.md deps: %v", d)
	}
	f6 := jsonPlan(t, m, "features/f6.md")
	if u := f6["deps"].(map[string]any)["unmet"].([]any); len(u) != 1 || u[0].(map[string]any)["reason"] != "open:bugs" {
		t.Errorf("features/f6.md deps: %v", f6["deps"])
	}
	f2 := jsonPlan(t, m, "features/f2.md")
	if f2["assignee"] != "alice" || f2["agent_assignable"] != false || f2["fit"] != "underqualified" || f2["eligible"] != false {
		t.Errorf("features/f2.md: %v", f2)
	}
	if f3 := jsonPlan(t, m, "features/f3.md"); !slices.Equal(toStrings(f3["preferred"]), []string{"small", "mid"}) {
		t.Errorf("features/f3.md preferred: %v", f3["preferred"])
	}
	if f5 := jsonPlan(t, m, "features/f5.md"); f5["fit"] != "unknown" || f5["eligible"] != true {
		t.Errorf("features/f5.md: %v", f5)
	}
	f4 := jsonPlan(t, m, "features/f4.md")
	if l, _ := f4["lease"].(map[string]any); l == nil || l["agent_id"] != "anchor-w" || l["expired"] != false || f4["eligible"] != false {
		t.Errorf("features/f4.md lease: %v", f4)
	}
	for _, k := range []string{"agent_id", "claimed_at", "expires_at", "expired"} {
		if _, ok := f4["lease"].(map[string]any)[k]; !ok {
			t.Errorf("lease lacks %q", k)
		}
	}
	stale := jsonPlan(t, m, "in-progress/stale.md")
	if l, _ := stale["lease"].(map[string]any); l == nil || l["agent_id"] != "gone-agent" || l["expired"] != true {
		t.Errorf("in-progress/stale.md lease: %v", stale["lease"])
	}
	if mine := jsonPlan(t, m, "in-progress/mine.md"); mine["lane"] != "in-progress" || mine["eligible"] != false ||
		mine["lease"].(map[string]any)["agent_id"] != "me" {
		t.Errorf("in-progress/mine.md: %v", mine)
	}

	// Rank 1 is what a bare pick takes.
	r := fw(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "me")
	want(t, r, 0)
	if !isPlanPath(dir, lastLine(r.stdout), "in-progress/bb.md") {
		t.Errorf("bare pick did not take rank 1: %v", r)
	}
}

func TestWorkOnceMaxPlansClaimsInPickOrder(t *testing.T) {
	t.Parallel()
	dir := newTree(t,
		plan{rel: "features/fb.md", fields: "Preferred models: mid"},
		plan{rel: "features/fc.md", fields: "Preferred models: mid"},
		plan{rel: "features/fa.md", fields: "Priority: P1; Preferred models: mid"},
		plan{rel: "bugs/b1.md", fields: "Priority: P3; Preferred models: mid"},
	)
	r := fw(t, dir, "work-once", "--max-plans", "3", "--agent-id", "w")
	want(t, r, 0)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	wantRels := []string{"in-progress/b1.md", "in-progress/fa.md", "in-progress/fb.md"}
	if len(lines) != 3 {
		t.Fatalf("want 3 lines: %v", r)
	}
	for i, rel := range wantRels {
		if !isPlanPath(dir, lines[i], rel) || activeOwner(t, dir, rel) != "w" {
			t.Errorf("line %d = %q, want %s claimed", i, lines[i], rel)
		}
	}
	if !exists(dir, "features/fc.md") {
		t.Errorf("a fourth plan was claimed")
	}
	// --once does not cap --max-plans; fewer left than asked still exits 0.
	r = fw(t, dir, "work-once", "--once", "--max-plans", "5", "--agent-id", "w")
	want(t, r, 0)
	if strings.Count(strings.TrimSpace(r.stdout), "\n") != 0 || !isPlanPath(dir, lastLine(r.stdout), "in-progress/fc.md") {
		t.Errorf("second run: %v", r)
	}
	r = fw(t, dir, "work-once", "--max-plans", "0", "--agent-id", "w")
	want(t, r, 2)
}

// ---- event log ----

func TestEveryStateChangeAppendsEvent(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "drafts/d.md", fields: "Preferred models: mid"})
	steps := [][]string{
		{"promote", "d", "--to", "bugs", "--agent-id", "op"},
		{"work-once", "--slug", "d", "--agent-id", "a"},
		{"release", "in-progress/d.md", "--agent-id", "a"},
		{"park", "d", "--to", "blocked", "--agent-id", "op"},
		{"return", "d", "--agent-id", "op"},
		{"work-once", "--slug", "d", "--agent-id", "a"},
	}
	for _, s := range steps {
		want(t, fw(t, dir, s...), 0)
	}
	// The claimer dies; b recovers and completes.
	if err := os.Remove(leaseFilePath(dir, "in-progress/d.md")); err != nil {
		t.Fatal(err)
	}
	want(t, fw(t, dir, "recover", "d", "--agent-id", "b"), 0)
	want(t, fw(t, dir, "complete", "d", "--agent-id", "b"), 0)
	if !exists(dir, "completed/d.md") {
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
	got := eventsOf(t, dir)
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
		draft              *plan
		problem            string
	}{
		{name: "NoPreferred", rel: "drafts/nopref.md", draft: &plan{rel: "drafts/nopref.md", fields: "Value: high"}, problem: "Preferred models"},
		{name: "NoDoneWhen", rel: "drafts/nodone.md", content: noDone, problem: "Done when"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := newTree(t)
			if c.draft != nil {
				writePlan(t, dir, *c.draft, time.Minute)
			} else {
				putRaw(t, dir, c.rel, c.content)
			}
			slug := strings.TrimSuffix(filepath.Base(c.rel), ".md")
			r := fw(t, dir, "promote", slug, "--to", "features")
			want(t, r, 2)
			if !exists(dir, c.rel) || exists(dir, "features/"+slug+".md") || !strings.Contains(r.stderr, c.problem) {
				t.Fatalf("refusal must keep the draft and name %q: %v", c.problem, r)
			}
			r = fw(t, dir, "promote", slug, "--to", "features", "--force")
			want(t, r, 0)
			if exists(dir, c.rel) || !exists(dir, "features/"+slug+".md") || !strings.Contains(r.stderr, "warning") || !strings.Contains(r.stderr, c.problem) {
				t.Fatalf("--force must promote with a warning naming %q: %v", c.problem, r)
			}
		})
	}
	t.Run("CompleteDraftPromotesQuietly", func(t *testing.T) {
		t.Parallel()
		dir := newTree(t, plan{rel: "drafts/ok.md", fields: "Preferred models: mid"})
		r := fw(t, dir, "promote", "ok", "--to", "bugs")
		want(t, r, 0)
		if !exists(dir, "bugs/ok.md") || r.stderr != "" || !isPlanPath(dir, lastLine(r.stdout), "bugs/ok.md") {
			t.Fatalf("promote: %v", r)
		}
	})
}

func TestScaffoldCreatesTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want(t, fw(t, dir, "scaffold", dir), 0)
	for _, d := range []string{"drafts", "bugs", "features", "in-progress", "review-needed", "ambiguous", "blocked", "completed", ".leases", "logs"} {
		if fi, err := os.Stat(filepath.Join(dir, ".plans", d)); err != nil || !fi.IsDir() {
			t.Errorf("lane %s missing: %v", d, err)
		}
	}
	if !strings.Contains(readRel(t, dir, "README.md"), "Preferred models") {
		t.Errorf("README.md does not explain the header")
	}
	gi := strings.Split(readRel(t, dir, ".gitignore"), "\n")
	for _, line := range []string{"*.local.md", ".leases/"} {
		if !slices.Contains(gi, line) {
			t.Errorf(".gitignore lacks %q: %q", line, gi)
		}
	}
	// A second scaffold keeps everything and says so.
	r := fw(t, dir, "scaffold", dir)
	want(t, r, 0)
	if !strings.Contains(r.stdout, "nothing to do") {
		t.Errorf("rescaffold: %v", r)
	}
	want(t, fw(t, dir, "check", "--root", dir), 0)
}

func TestCheckReportsProblems(t *testing.T) {
	t.Parallel()
	t.Run("CleanTree", func(t *testing.T) {
		t.Parallel()
		dir := newTree(t,
			plan{rel: "completed/base.md"},
			plan{rel: "bugs/b.md", fields: "Priority: P1; Value: high; Preferred models: mid; Depends on: base"},
			plan{rel: "features/f.md", fields: "Preferred models: mid; Assignee: ai"},
			plan{rel: "drafts/d.md"},
		)
		want(t, fw(t, dir, "work-once", "--slug", "f", "--agent-id", "a"), 0)
		r := fw(t, dir, "check")
		want(t, r, 0)
		if !strings.HasPrefix(r.stdout, "ok:") {
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
		{"StarBullet", func(t *testing.T, dir string) { putRaw(t, dir, "features/a.md", header("* **Value:** high")) },
			[][]string{{"features/a.md:3:", "bullet"}}},
		{"BoldKeyWithoutBullet", func(t *testing.T, dir string) { putRaw(t, dir, "features/a.md", header("**Priority:** P1")) },
			[][]string{{"features/a.md:3:", "bullet"}}},
		{"BadPriorityWord", func(t *testing.T, dir string) { putRaw(t, dir, "features/a.md", header("- **Priority:** banana")) },
			[][]string{{"features/a.md:3:", "banana"}}},
		{"MissingDependency", func(t *testing.T, dir string) {
			writePlan(t, dir, plan{rel: "features/a.md", fields: "Preferred models: mid; Depends on: ghost"}, time.Minute)
		}, [][]string{{"features/a.md", "ghost"}}},
		{"DependencyCycle", func(t *testing.T, dir string) {
			writePlan(t, dir, plan{rel: "features/a.md", fields: "Preferred models: mid; Depends on: b"}, time.Minute)
			writePlan(t, dir, plan{rel: "features/b.md", fields: "Preferred models: mid; Depends on: a"}, time.Minute)
		}, [][]string{{"features/a.md", "cycle"}, {"features/b.md", "cycle"}}},
		{"DuplicateSlug", func(t *testing.T, dir string) {
			writePlan(t, dir, plan{rel: "bugs/x.md", fields: "Preferred models: mid"}, time.Minute)
			writePlan(t, dir, plan{rel: "features/x.md", fields: "Preferred models: mid"}, time.Minute)
		}, [][]string{{"bugs/x.md", "features/x.md"}}},
		{"CorruptLease", func(t *testing.T, dir string) {
			writePlan(t, dir, plan{rel: "features/a.md", fields: "Preferred models: mid"}, time.Minute)
			putRaw(t, dir, ".leases/features__a.md.json", "{not json")
			age(t, dir, ".leases/features__a.md.json") // not one being written
		}, [][]string{{".leases/features__a.md.json", "corrupt"}}},
		{"LeaseForMissingPlan", func(t *testing.T, dir string) {
			putLease(t, dir, "in-progress/ghost.md", anchorLease("in-progress/ghost.md", "w", 0, 600))
		}, [][]string{{".leases/in-progress__ghost.md.json", "in-progress/ghost.md"}}},
		{"InProgressWithoutLease", func(t *testing.T, dir string) {
			writePlan(t, dir, plan{rel: "in-progress/a.md", fields: "Preferred models: mid"}, time.Minute)
		}, [][]string{{"in-progress/a.md", "lease"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := newTree(t)
			c.setup(t, dir)
			r := fw(t, dir, "check")
			want(t, r, 1)
			lines := strings.Split(r.stdout, "\n")
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
					t.Errorf("no check line with all of %q:\n%s", parts, r.stdout)
				}
			}
			if !strings.HasPrefix(r.stderr, "fleetwatch: check:") {
				t.Errorf("check stderr summary: %q", r.stderr)
			}
		})
	}
}

// anchor's named --slug: exact names (also *.local.md), own in-progress
// first, several hits are ambiguous, a foreign in-progress plan is not found.
func TestWorkOnceSlugResolution(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		plans  []plan
		claims [][2]string // slug, agent claimed before the named call
		after  []plan      // written after those claims
		slug   string
		code   int
		gets   string // rel printed on success
	}{
		{name: "LocalPlan", plans: []plan{{rel: "features/foo.local.md", fields: "Preferred models: mid"}},
			slug: "foo", code: 0, gets: "in-progress/foo.local.md"},
		{name: "BugAndFeatureAmbiguous", plans: []plan{{rel: "bugs/x.md"}, {rel: "features/x.md"}},
			slug: "x", code: 2},
		{name: "ExactNameOnly", plans: []plan{{rel: "features/foo-bar.md"}},
			slug: "foo", code: 1},
		{name: "ForeignInProgressNotFound", plans: []plan{{rel: "features/x.md"}},
			claims: [][2]string{{"x", "other"}}, slug: "x", code: 1},
		{name: "OwnInProgressBeatsReadyTwin", plans: []plan{{rel: "features/x.md"}},
			claims: [][2]string{{"x", "me"}}, after: []plan{{rel: "features/x.md"}}, slug: "x", code: 0, gets: "in-progress/x.md"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := newTree(t, c.plans...)
			for _, cl := range c.claims {
				want(t, fw(t, dir, "work-once", "--slug", cl[0], "--agent-id", cl[1]), 0)
			}
			for _, p := range c.after {
				writePlan(t, dir, p, time.Hour)
			}
			r := fw(t, dir, "work-once", "--slug", c.slug, "--agent-id", "me")
			want(t, r, c.code)
			if c.gets != "" && !isPlanPath(dir, lastLine(r.stdout), c.gets) {
				t.Errorf("want %s: %v", c.gets, r)
			}
			if c.code == 2 && !strings.Contains(r.stderr, "ambiguous") {
				t.Errorf("want 'ambiguous': %v", r)
			}
		})
	}
}

// Release, park, return and complete check ownership unless forced.
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
			dir := newTree(t, plan{rel: "features/x.md", fields: "Preferred models: mid"})
			want(t, fw(t, dir, "work-once", "--slug", "x", "--agent-id", "owner"), 0)
			r := fw(t, dir, append(c.verb, "--agent-id", "intruder")...)
			want(t, r, 2)
			if !exists(dir, "in-progress/x.md") || activeOwner(t, dir, "in-progress/x.md") != "owner" {
				t.Fatalf("non-owner %v took effect", c.verb)
			}
			r = fw(t, dir, append(c.verb, "--agent-id", "intruder", "--force")...)
			want(t, r, 0)
			if !exists(dir, c.dest) || exists(dir, "in-progress/x.md") || leaseOf(t, dir, "in-progress/x.md") != nil {
				t.Fatalf("forced %v: %v", c.verb, r)
			}
		})
	}
	t.Run("OwnerNeedsNoForce", func(t *testing.T) {
		t.Parallel()
		dir := newTree(t, plan{rel: "features/x.md", fields: "Preferred models: mid"})
		want(t, fw(t, dir, "work-once", "--slug", "x", "--agent-id", "owner"), 0)
		want(t, fw(t, dir, "complete", "in-progress/x.md", "--agent-id", "owner"), 0)
		if !exists(dir, "completed/x.md") {
			t.Fatal("not completed")
		}
	})
}

// anchor: a --recover, --park or --return-ready slug that names no plan is
// "nothing to do" (exit 1), not an error.
func TestWorkOnceNamedVerbsMissingSlugExit1(t *testing.T) {
	dir := newTree(t)
	for _, args := range [][]string{
		{"work-once", "--recover", "--slug", "nope"},
		{"work-once", "--park", "blocked", "--slug", "nope"},
		{"work-once", "--return-ready", "--slug", "nope"},
	} {
		if r := fw(t, dir, args...); r.code != 1 || !strings.Contains(r.stderr, `"nope"`) {
			t.Errorf("%v: %v", args, r)
		}
	}
}

// What a run finds but leaves to a person reaches monitors in --json too.
func TestListJSONWarnsOfUnleasedClaim(t *testing.T) {
	dir := newTree(t, plan{rel: "in-progress/lost.md"})
	r := fw(t, dir, "work-once", "--list", "--json")
	var out struct {
		Warnings []struct{ File, Message string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v: %v", err, r)
	}
	for _, w := range out.Warnings {
		if w.File == "in-progress/lost.md" && strings.Contains(w.Message, "without a lease") {
			return
		}
	}
	t.Fatalf("no warning for the unleased claim: %+v", out.Warnings)
}
