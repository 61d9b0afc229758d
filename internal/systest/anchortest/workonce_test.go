package anchortest

// CLI tests for work-once's picks and claims as anchor's own test suite
// asserts them (/work/shared/anchor/TESTS.md items 1–17 and 56–61) where
// SPEC.md keeps them, plus the --list and --json contracts; the verbs are
// in ../verbtest. Item numbers are given in comments as "TESTS n".

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// ---- work-once: TESTS 1–17 ----

// TESTS 1 and 15.
func TestWorkOnceListShowsReadyPlansWithFit(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/a.md", Fields: "Value: medium; Preferred models: mid"},
		fwtest.Plan{Rel: "bugs/b.md", Fields: "Value: medium; Preferred models: mid"},
	)
	r := fwtest.Run(t, dir, "work-once", "--list", "--tier", "mid", "--agent-id", "list-me")
	fwtest.Want(t, r, 0)
	for _, s := range []string{"features/a.md", "bugs/b.md", "good"} {
		if !strings.Contains(r.Stdout, s) {
			t.Errorf("--list stdout lacks %q:\n%s", s, r.Stdout)
		}
	}
	if fwtest.Exists(dir, "in-progress/a.md") || !fwtest.Exists(dir, "features/a.md") {
		t.Error("--list moved a plan")
	}
}

// TESTS 2, 3, 4, 8, 14: bare picks and what they may not take.
func TestWorkOnceBarePick(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		plans []fwtest.Plan
		args  []string
		code  int
		// claimed is the rel that must now be in in-progress/ (code 0);
		// stays lists rels that must not have moved.
		claimed string
		stays   []string
	}{
		{name: "EmptyReadyLanesExit1", args: []string{"--tier", "mid", "--agent-id", "t"}, code: 1},
		{name: "SkipsUnderqualified",
			plans: []fwtest.Plan{{Rel: "features/hard.md", Fields: "Value: medium; Preferred models: frontier"}},
			args:  []string{"--tier", "small", "--agent-id", "tiny"}, code: 1, stays: []string{"features/hard.md"}},
		{name: "NoFitCheckTakesUnderqualified",
			plans: []fwtest.Plan{{Rel: "features/hard.md", Fields: "Value: medium; Preferred models: frontier"}},
			args:  []string{"--tier", "small", "--no-fit-check", "--agent-id", "s"}, code: 0, claimed: "in-progress/hard.md"},
		{name: "SkipsPersonsPlan",
			plans: []fwtest.Plan{{Rel: "features/hers.md", Fields: "Value: medium; Preferred models: mid; Assignee: alice"}},
			args:  []string{"--tier", "mid", "--agent-id", "w1"}, code: 1, stays: []string{"features/hers.md"}},
		{name: "SkipsPersonsPlanEvenWithBothOverrides",
			plans: []fwtest.Plan{{Rel: "features/hers.md", Fields: "Preferred models: mid; Assignee: alice"}},
			args:  []string{"--tier", "mid", "--no-fit-check", "--no-dep-check", "--agent-id", "w1"}, code: 1, stays: []string{"features/hers.md"}},
		{name: "SkipsUnmetDependency",
			plans: []fwtest.Plan{{Rel: "features/app.md", Fields: "Preferred models: mid; Depends on: nope"}},
			args:  []string{"--tier", "mid", "--agent-id", "w1"}, code: 1, stays: []string{"features/app.md"}},
		{name: "NoDepCheckTakesUnmetDependency",
			plans: []fwtest.Plan{{Rel: "features/app.md", Fields: "Preferred models: mid; Depends on: nope"}},
			args:  []string{"--tier", "mid", "--no-dep-check", "--agent-id", "w1"}, code: 0, claimed: "in-progress/app.md"},
		{name: "ExecutorHeavyIsMid", // TESTS 16
			plans: []fwtest.Plan{{Rel: "features/m.md", Fields: "Preferred models: mid"}, {Rel: "features/r.md", Fields: "Preferred models: reasoner"}},
			args:  []string{"--tier", "executor-heavy", "--agent-id", "x"}, code: 0, claimed: "in-progress/m.md", stays: []string{"features/r.md"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := fwtest.NewTree(t, c.plans...)
			r := fwtest.Run(t, dir, append([]string{"work-once", "--once"}, c.args...)...)
			fwtest.Want(t, r, c.code)
			if c.claimed != "" {
				if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), c.claimed) || !fwtest.Exists(dir, c.claimed) {
					t.Errorf("want %s claimed and printed: %v", c.claimed, r)
				}
			}
			for _, s := range c.stays {
				if !fwtest.Exists(dir, s) {
					t.Errorf("%s moved: %v", s, r)
				}
			}
		})
	}
}

// TESTS 5 and 6.
func TestWorkOnceSlugRefusesPersonsPlanUnlessAllowAssigned(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/hers.md", Fields: "Value: medium; Preferred models: mid; Assignee: alice"})
	r := fwtest.Run(t, dir, "work-once", "--slug", "hers", "--tier", "mid", "--agent-id", "w1")
	fwtest.Want(t, r, 1)
	if !strings.Contains(r.Stderr, "assigned to alice") || !fwtest.Exists(dir, "features/hers.md") {
		t.Fatalf("want refusal naming alice, plan in place: %v", r)
	}
	r = fwtest.Run(t, dir, "work-once", "--slug", "hers", "--tier", "mid", "--agent-id", "w1", "--allow-assigned")
	fwtest.Want(t, r, 0)
	if !fwtest.Exists(dir, "in-progress/hers.md") || fwtest.Exists(dir, "features/hers.md") {
		t.Fatalf("--allow-assigned did not claim: %v", r)
	}
}

// TESTS 7 and 8.
func TestWorkOnceClaimMovesPlanAndPrintsInProgressPath(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md", Fields: "Value: medium; Preferred models: mid"})
	r := fwtest.Run(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "w1")
	fwtest.Want(t, r, 0)
	if !strings.HasSuffix(fwtest.LastLine(r.Stdout), "in-progress/a.md") || !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "in-progress/a.md") {
		t.Errorf("last stdout line is not the absolute in-progress path: %q", r.Stdout)
	}
	if !fwtest.Exists(dir, "in-progress/a.md") || fwtest.Exists(dir, "features/a.md") {
		t.Errorf("plan not moved")
	}
	l := fwtest.LeaseOf(t, dir, "in-progress/a.md")
	if l == nil || l["agent_id"] != "w1" || l["plan"] != "in-progress/a.md" || l["origin"] != "features/a.md" {
		t.Errorf("in-progress lease: %v", l)
	}
	if fwtest.LeaseOf(t, dir, "features/a.md") != nil {
		t.Errorf("ready-path lease left behind")
	}
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "w2"), 1)
}

// TESTS 9 and 58: a bare pick never resumes the worker's own in-progress plan.
func TestWorkOnceBarePickNeverResumesOwnInProgress(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/a.md", Fields: "Value: medium; Preferred models: mid"},
		fwtest.Plan{Rel: "features/b.md", Fields: "Value: medium; Preferred models: mid"},
	)
	r := fwtest.Run(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "w1")
	fwtest.Want(t, r, 0)
	if !strings.HasSuffix(fwtest.LastLine(r.Stdout), "in-progress/a.md") {
		t.Fatalf("first claim: %v", r)
	}
	r = fwtest.Run(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "w1")
	fwtest.Want(t, r, 0)
	if !strings.HasSuffix(fwtest.LastLine(r.Stdout), "in-progress/b.md") || strings.Contains(r.Stdout, "in-progress/a.md") {
		t.Fatalf("second claim must take b only: %v", r)
	}
	// Nothing ready is left: the worker's own two claims are not picked.
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "w1"), 1)
}

// TESTS 10 and 75.
func TestWorkOnceHeartbeatExtendsOwnLease(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid"})
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w1", "--lease-ttl", "60"), 0)
	before := fwtest.LeaseOf(t, dir, "in-progress/a.md")
	r := fwtest.Run(t, dir, "work-once", "--heartbeat", "in-progress/a.md", "--agent-id", "w1", "--lease-ttl", "120")
	fwtest.Want(t, r, 0)
	if strings.TrimSpace(r.Stdout) != "in-progress/a.md" {
		t.Errorf("heartbeat prints the rel, got %q", r.Stdout)
	}
	after := fwtest.LeaseOf(t, dir, "in-progress/a.md")
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
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid"})
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w1"), 0)
	// The relative --path resolves against .plans/.
	r := fwtest.Run(t, dir, "work-once", "--recover", "--path", "in-progress/a.md", "--agent-id", "w2")
	fwtest.Want(t, r, 2)
	if fwtest.ActiveOwner(t, dir, "in-progress/a.md") != "w1" {
		t.Fatalf("recover of an active lease changed the owner")
	}
	fwtest.PutLease(t, dir, "in-progress/a.md", fwtest.AnchorLease("in-progress/a.md", "w1", 100, 90))
	r = fwtest.Run(t, dir, "work-once", "--recover", "--path", "in-progress/a.md", "--agent-id", "w2")
	fwtest.Want(t, r, 0)
	if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "in-progress/a.md") {
		t.Errorf("recover prints the plan path: %v", r)
	}
	if fwtest.ActiveOwner(t, dir, "in-progress/a.md") != "w2" {
		t.Fatalf("owner after recover: %v", fwtest.LeaseOf(t, dir, "in-progress/a.md"))
	}
	// The origin the stale lease lacked comes back from the claim event.
	if l := fwtest.LeaseOf(t, dir, "in-progress/a.md"); l["origin"] != "features/a.md" {
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
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: rel, Fields: "Preferred models: mid"})
			r := fwtest.Run(t, dir, "work-once", "--path", filepath.Join(dir, ".plans", rel), "--tier", "mid", "--agent-id", "w")
			fwtest.Want(t, r, 2)
			if !fwtest.Exists(dir, rel) || !strings.Contains(r.Stderr, lane) {
				t.Fatalf("want refusal naming %s, plan in place: %v", lane, r)
			}
		})
	}
}

// TESTS 16: registry tier words map to fit tiers.
func TestWorkOnceRegistryTiersMapToFitTiers(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/m.md", Fields: "Preferred models: mid"})
	for tier, fit := range map[string]string{"executor-heavy": "mid", "executor": "mid", "detached": "mid", "swarm": "small", "reasoner": "reasoner", "Frontier": "frontier"} {
		m := fwtest.WorkOnceJSON(t, dir, "--tier", tier, "--agent-id", "x")
		if w, _ := m["worker"].(map[string]any); w["tier"] != fit {
			t.Errorf("--tier %s: worker.tier %v, want %s", tier, w["tier"], fit)
		}
	}
}

// TESTS 17.
func TestWorkOnceParkByAbsolutePath(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/thin.md", Fields: "Preferred models: mid"})
	r := fwtest.Run(t, dir, "work-once", "--path", filepath.Join(dir, ".plans", "features", "thin.md"), "--park", "ambiguous", "--agent-id", "w")
	fwtest.Want(t, r, 0)
	if !fwtest.Exists(dir, "ambiguous/thin.md") || fwtest.Exists(dir, "features/thin.md") || !strings.Contains(r.Stdout, "ambiguous") {
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
				dir := fwtest.NewTree(t,
					fwtest.Plan{Rel: "features/taken.md", Fields: "Preferred models: mid"},
					fwtest.Plan{Rel: "features/ready.md", Fields: "Preferred models: mid"},
				)
				if how == "claimed" {
					fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "taken", "--agent-id", "agent-a", "--lease-ttl", "600"), 0)
				} else {
					fwtest.PutLease(t, dir, "features/taken.md", fwtest.AnchorLease("features/taken.md", "agent-a", 0, 600))
				}
				r := fwtest.Run(t, dir, "work-once", "--once", "--agent-id", picker)
				fwtest.Want(t, r, 0)
				if !strings.HasSuffix(fwtest.LastLine(r.Stdout), "in-progress/ready.md") {
					t.Fatalf("want ready.md: %v", r)
				}
			})
		}
	}
}

// TESTS 58.
func TestWorkOnceNothingLeftForOwnerOfInProgress(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/ready.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "features/taken.md", Fields: "Preferred models: mid"},
	)
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "taken", "--agent-id", "agent-a"), 0)
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "ready", "--agent-id", "agent-b"), 0)
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "agent-a"), 1)
}

// TESTS 59, 60, 61, 66, 67, 77, 78: naming an in-progress plan.
func TestWorkOnceNamedInProgressNeedsOwnActiveLease(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/y.md", Fields: "Preferred models: mid"})
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "y", "--agent-id", "agent-a", "--lease-ttl", "60"), 0)
	before := fwtest.LeaseOf(t, dir, "in-progress/y.md")

	// 61/66: another agent is refused with "owned by".
	r := fwtest.Run(t, dir, "work-once", "--path", "in-progress/y.md", "--agent-id", "agent-b")
	fwtest.Want(t, r, 2)
	if !strings.Contains(r.Stderr, "owned by") || !strings.Contains(r.Stderr, "agent-a") {
		t.Errorf("want 'owned by agent-a': %v", r)
	}
	// 59/67: the owner resumes it, by path or slug.
	r = fwtest.Run(t, dir, "work-once", "--path", "in-progress/y.md", "--agent-id", "agent-a", "--lease-ttl", "120")
	fwtest.Want(t, r, 0)
	if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "in-progress/y.md") || fwtest.ActiveOwner(t, dir, "in-progress/y.md") != "agent-a" {
		t.Errorf("resume: %v", r)
	}
	if after := fwtest.LeaseOf(t, dir, "in-progress/y.md"); after["expires_at"].(float64) < before["expires_at"].(float64) {
		t.Errorf("resume shortened the lease: %v → %v", before, after)
	}
	r = fwtest.Run(t, dir, "work-once", "--slug", "y", "--agent-id", "agent-a")
	fwtest.Want(t, r, 0)
	if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "in-progress/y.md") {
		t.Errorf("resume by slug: %v", r)
	}
	// A foreign in-progress plan is not found by slug (exit 1).
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "y", "--agent-id", "agent-b"), 1)

	// 60/77: anchor's --release drops the lease and strands the plan; with
	// no lease nobody may name it, not even the previous owner.
	if err := os.Remove(fwtest.LeaseFilePath(dir, "in-progress/y.md")); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"agent-a", "agent-b"} {
		r = fwtest.Run(t, dir, "work-once", "--path", "in-progress/y.md", "--agent-id", agent)
		fwtest.Want(t, r, 2)
		if !strings.Contains(r.Stderr, "no active lease") {
			t.Errorf("%s: want 'no active lease': %v", agent, r)
		}
	}
	// 78: recover takes it.
	r = fwtest.Run(t, dir, "work-once", "--recover", "--slug", "y", "--agent-id", "agent-b")
	fwtest.Want(t, r, 0)
	if fwtest.ActiveOwner(t, dir, "in-progress/y.md") != "agent-b" {
		t.Errorf("owner after recover: %v", fwtest.LeaseOf(t, dir, "in-progress/y.md"))
	}
}

// ---- --list, --list --json, --max-plans ----

// listFixture is a tree seen by agent "me": its own claim, another agent's,
// an expired one, a ready-path lease from anchor, and ready plans of every
// shape the list distinguishes.
func listFixture(t *testing.T) string {
	t.Helper()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "completed/done-dep.md"},
		fwtest.Plan{Rel: "bugs/bb.md", Fields: "Priority: P1; Preferred models: mid"},
		fwtest.Plan{Rel: "features/f1.md", Fields: "Preferred models: mid; Depends on: gone-dep, done-dep"},
		fwtest.Plan{Rel: "features/f2.md", Fields: "Preferred models: reasoner; Assignee: alice — owns it"},
		fwtest.Plan{Rel: "features/f3.md", Fields: "Value: low; Preferred models: small, mid; Depends on: done-dep"},
		fwtest.Plan{Rel: "features/f4.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "features/f5.md", Fields: "Value: low; Preferred models: Claude Sonnet 5"},
		fwtest.Plan{Rel: "features/f6.md", Fields: "Value: low; Preferred models: mid; Depends on: bb"},
		fwtest.Plan{Rel: "features/mine.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "features/theirs.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "in-progress/stale.md", Fields: "Preferred models: mid"},
	)
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "mine", "--agent-id", "me"), 0)
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "theirs", "--agent-id", "other"), 0)
	fwtest.PutLease(t, dir, "features/f4.md", fwtest.AnchorLease("features/f4.md", "anchor-w", 0, 600))
	fwtest.PutLease(t, dir, "in-progress/stale.md", fwtest.AnchorLease("in-progress/stale.md", "gone-agent", 500, 100))
	return dir
}

func TestListTSVColumns(t *testing.T) {
	t.Parallel()
	dir := listFixture(t)
	r := fwtest.Run(t, dir, "work-once", "--list", "--tier", "mid", "--agent-id", "me")
	fwtest.Want(t, r, 0)
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
	if r.Stdout != wantOut {
		t.Errorf("--list stdout:\n%s\nwant:\n%s", r.Stdout, wantOut)
	}
	for _, s := range []string{
		"# in-progress (other agents — ignore):\n",
		"#   in-progress/theirs.md  agent=other\n",
		"#   in-progress/stale.md  agent=gone-agent\n",
		"# active leases:\n#   features/f4.md  agent=anchor-w\n#   in-progress/mine.md  agent=me\n#   in-progress/theirs.md  agent=other\n",
	} {
		if !strings.Contains(r.Stderr, s) {
			t.Errorf("--list stderr lacks %q:\n%s", s, r.Stderr)
		}
	}
	if strings.Index(r.Stderr, "# in-progress (other agents") > strings.Index(r.Stderr, "# active leases:") {
		t.Errorf("the in-progress section comes before the active leases:\n%s", r.Stderr)
	}
}

func TestListEmptyTree(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	r := fwtest.Run(t, dir, "work-once", "--list", "--agent-id", "me")
	fwtest.Want(t, r, 0)
	if strings.TrimSpace(r.Stdout) != "(no ready plans under bugs/ or features/; no owned in-progress)" {
		t.Errorf("empty list: %v", r)
	}
}

// anchor lists the agent's own in-progress plans first, by name.
func TestListOwnInProgressFirstByName(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/ready.md", Fields: "Priority: P1; Value: high; Preferred models: mid"},
		fwtest.Plan{Rel: "features/zeta.md", Fields: "Priority: P1; Value: high; Preferred models: mid"},
		fwtest.Plan{Rel: "bugs/alpha.md", Fields: "Priority: P3; Value: low; Preferred models: mid"},
	)
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "zeta", "--agent-id", "me"), 0)
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "alpha", "--agent-id", "me"), 0)
	r := fwtest.Run(t, dir, "work-once", "--list", "--agent-id", "me")
	fwtest.Want(t, r, 0)
	var paths []string
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n")[1:] {
		paths = append(paths, strings.SplitN(line, "\t", 2)[0])
	}
	if wantPaths := []string{"in-progress/alpha.md", "in-progress/zeta.md", "features/ready.md"}; !slices.Equal(paths, wantPaths) {
		t.Errorf("--list rows %v, want %v", paths, wantPaths)
	}
}

func TestListJSONShape(t *testing.T) {
	t.Parallel()
	dir := listFixture(t)
	m := fwtest.WorkOnceJSON(t, dir, "--tier", "mid", "--agent-id", "me")
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

	bb := fwtest.JSONPlan(t, m, "bugs/bb.md")
	if bb["slug"] != "bb" || bb["lane"] != "bugs" || bb["title"] != "Plan: bb" || bb["priority"] != "P1" || bb["value"] != "medium" ||
		bb["assignee"] != "" || bb["agent_assignable"] != true || bb["fit"] != "good" || bb["lease"] != nil {
		t.Errorf("bugs/bb.md: %v", bb)
	}
	if d := bb["deps"].(map[string]any); d["met"] != true || len(d["unmet"].([]any)) != 0 {
		t.Errorf("bugs/bb.md deps: %v", d)
	}
	f1 := fwtest.JSONPlan(t, m, "features/f1.md")
	d := f1["deps"].(map[string]any)
	unmet, _ := d["unmet"].([]any)
	if d["met"] != false || len(unmet) != 1 || unmet[0].(map[string]any)["slug"] != "gone-dep" || unmet[0].(map[string]any)["reason"] != "missing" {
		t.Errorf("features/f1.md deps: %v", d)
	}
	f6 := fwtest.JSONPlan(t, m, "features/f6.md")
	if u := f6["deps"].(map[string]any)["unmet"].([]any); len(u) != 1 || u[0].(map[string]any)["reason"] != "open:bugs" {
		t.Errorf("features/f6.md deps: %v", f6["deps"])
	}
	f2 := fwtest.JSONPlan(t, m, "features/f2.md")
	if f2["assignee"] != "alice" || f2["agent_assignable"] != false || f2["fit"] != "underqualified" || f2["eligible"] != false {
		t.Errorf("features/f2.md: %v", f2)
	}
	if f3 := fwtest.JSONPlan(t, m, "features/f3.md"); !slices.Equal(fwtest.ToStrings(f3["preferred"]), []string{"small", "mid"}) {
		t.Errorf("features/f3.md preferred: %v", f3["preferred"])
	}
	if f5 := fwtest.JSONPlan(t, m, "features/f5.md"); f5["fit"] != "unknown" || f5["eligible"] != true {
		t.Errorf("features/f5.md: %v", f5)
	}
	f4 := fwtest.JSONPlan(t, m, "features/f4.md")
	if l, _ := f4["lease"].(map[string]any); l == nil || l["agent_id"] != "anchor-w" || l["expired"] != false || f4["eligible"] != false {
		t.Errorf("features/f4.md lease: %v", f4)
	}
	for _, k := range []string{"agent_id", "claimed_at", "expires_at", "expired"} {
		if _, ok := f4["lease"].(map[string]any)[k]; !ok {
			t.Errorf("lease lacks %q", k)
		}
	}
	stale := fwtest.JSONPlan(t, m, "in-progress/stale.md")
	if l, _ := stale["lease"].(map[string]any); l == nil || l["agent_id"] != "gone-agent" || l["expired"] != true {
		t.Errorf("in-progress/stale.md lease: %v", stale["lease"])
	}
	if mine := fwtest.JSONPlan(t, m, "in-progress/mine.md"); mine["lane"] != "in-progress" || mine["eligible"] != false ||
		mine["lease"].(map[string]any)["agent_id"] != "me" {
		t.Errorf("in-progress/mine.md: %v", mine)
	}

	// Rank 1 is what a bare pick takes.
	r := fwtest.Run(t, dir, "work-once", "--once", "--tier", "mid", "--agent-id", "me")
	fwtest.Want(t, r, 0)
	if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "in-progress/bb.md") {
		t.Errorf("bare pick did not take rank 1: %v", r)
	}
}

func TestWorkOnceMaxPlansClaimsInPickOrder(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/fb.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "features/fc.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "features/fa.md", Fields: "Priority: P1; Preferred models: mid"},
		fwtest.Plan{Rel: "bugs/b1.md", Fields: "Priority: P3; Preferred models: mid"},
	)
	r := fwtest.Run(t, dir, "work-once", "--max-plans", "3", "--agent-id", "w")
	fwtest.Want(t, r, 0)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	wantRels := []string{"in-progress/b1.md", "in-progress/fa.md", "in-progress/fb.md"}
	if len(lines) != 3 {
		t.Fatalf("want 3 lines: %v", r)
	}
	for i, rel := range wantRels {
		if !fwtest.IsPlanPath(dir, lines[i], rel) || fwtest.ActiveOwner(t, dir, rel) != "w" {
			t.Errorf("line %d = %q, want %s claimed", i, lines[i], rel)
		}
	}
	if !fwtest.Exists(dir, "features/fc.md") {
		t.Errorf("a fourth plan was claimed")
	}
	// --once does not cap --max-plans; fewer left than asked still exits 0.
	r = fwtest.Run(t, dir, "work-once", "--once", "--max-plans", "5", "--agent-id", "w")
	fwtest.Want(t, r, 0)
	if strings.Count(strings.TrimSpace(r.Stdout), "\n") != 0 || !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "in-progress/fc.md") {
		t.Errorf("second run: %v", r)
	}
	r = fwtest.Run(t, dir, "work-once", "--max-plans", "0", "--agent-id", "w")
	fwtest.Want(t, r, 2)
}

func TestWorkOnceSlugResolution(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		plans  []fwtest.Plan
		claims [][2]string   // slug, agent claimed before the named call
		after  []fwtest.Plan // written after those claims
		slug   string
		code   int
		gets   string // rel printed on success
	}{
		{name: "LocalPlan", plans: []fwtest.Plan{{Rel: "features/foo.local.md", Fields: "Preferred models: mid"}},
			slug: "foo", code: 0, gets: "in-progress/foo.local.md"},
		{name: "BugAndFeatureAmbiguous", plans: []fwtest.Plan{{Rel: "bugs/x.md"}, {Rel: "features/x.md"}},
			slug: "x", code: 2},
		{name: "ExactNameOnly", plans: []fwtest.Plan{{Rel: "features/foo-bar.md"}},
			slug: "foo", code: 1},
		{name: "ForeignInProgressNotFound", plans: []fwtest.Plan{{Rel: "features/x.md"}},
			claims: [][2]string{{"x", "other"}}, slug: "x", code: 1},
		{name: "OwnInProgressBeatsReadyTwin", plans: []fwtest.Plan{{Rel: "features/x.md"}},
			claims: [][2]string{{"x", "me"}}, after: []fwtest.Plan{{Rel: "features/x.md"}}, slug: "x", code: 0, gets: "in-progress/x.md"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := fwtest.NewTree(t, c.plans...)
			for _, cl := range c.claims {
				fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", cl[0], "--agent-id", cl[1]), 0)
			}
			for _, p := range c.after {
				fwtest.WritePlan(t, dir, p, time.Hour)
			}
			r := fwtest.Run(t, dir, "work-once", "--slug", c.slug, "--agent-id", "me")
			fwtest.Want(t, r, c.code)
			if c.gets != "" && !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), c.gets) {
				t.Errorf("want %s: %v", c.gets, r)
			}
			if c.code == 2 && !strings.Contains(r.Stderr, "ambiguous") {
				t.Errorf("want 'ambiguous': %v", r)
			}
		})
	}
}

// Release, park, return and complete check ownership unless forced.
func TestListJSONWarnsOfUnleasedClaim(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "in-progress/lost.md"})
	r := fwtest.Run(t, dir, "work-once", "--list", "--json")
	var out struct {
		Warnings []struct{ File, Message string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("%v: %v", err, r)
	}
	for _, w := range out.Warnings {
		if w.File == "in-progress/lost.md" && strings.Contains(w.Message, "without a lease") {
			return
		}
	}
	t.Fatalf("no warning for the unleased claim: %+v", out.Warnings)
}
