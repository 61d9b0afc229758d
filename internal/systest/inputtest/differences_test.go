package inputtest

// One test per item of SPEC.md "Deliberate differences from anchor": each
// sets up the case where anchor goes wrong and asserts what fleetwatch does.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// anchor reads an empty field's next line: the Assignee becomes the next
// bullet (a person) and Depends on becomes `## Goal` (never met).
func TestDiffEmptyHeaderFieldIsAbsent(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	fwtest.PutRaw(t, dir, "features/e.md", "# Plan: e\n\n- **Assignee:**\n- **Preferred models:** mid\n- **Depends on:**\n\n## Goal\nDo it.\n\n## Done when\n- done\n")
	m := fwtest.WorkOnceJSON(t, dir, "--agent-id", "w")
	p := fwtest.JSONPlan(t, m, "features/e.md")
	if p["assignee"] != "" || p["agent_assignable"] != true || p["eligible"] != true {
		t.Errorf("empty Assignee must be absent (any agent): %v", p)
	}
	if d := p["deps"].(map[string]any); d["met"] != true || len(d["unmet"].([]any)) != 0 {
		t.Errorf("empty Depends on must be absent: %v", d)
	}
	if !strings.Contains(fwtest.Run(t, dir, "work-once", "--list", "--agent-id", "w").Stdout, "features/e.md\tfeatures\tP2\tmedium\tmid\tgood\tnone\tai\t-\n") {
		t.Errorf("--list row for empty fields")
	}
	r := fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w")
	fwtest.Want(t, r, 0)
	if !fwtest.Exists(dir, "in-progress/e.md") {
		t.Errorf("plan with empty fields not claimed: %v", r)
	}
}

// anchor keeps ` # note` in the value: `other-slug   # or none` is one
// dependency that never exists, `ai  # …` is a person, `mid # …` a name.
func TestDiffHashStartsCommentInHeaderValue(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "completed/base.md"})
	fwtest.PutRaw(t, dir, "features/c.md", "# Plan: c\n\n"+
		"- **Value:** high   # worth it\n"+
		"- **Priority:** P1  # urgent\n"+
		"- **Preferred models:** mid   # or Qwen3 32B\n"+
		"- **Assignee:** ai   # anyone may take it\n"+
		"- **Depends on:** base   # or none\n\n## Done when\n- done\n")
	m := fwtest.WorkOnceJSON(t, dir, "--tier", "mid", "--agent-id", "w")
	p := fwtest.JSONPlan(t, m, "features/c.md")
	if p["value"] != "high" || p["priority"] != "P1" || p["assignee"] != "ai" || p["agent_assignable"] != true || p["fit"] != "good" || p["eligible"] != true {
		t.Errorf("comment not stripped: %v", p)
	}
	if got := fwtest.ToStrings(p["preferred"]); len(got) != 1 || got[0] != "mid" {
		t.Errorf("preferred %v, want [mid]", got)
	}
	if d := p["deps"].(map[string]any); d["met"] != true {
		t.Errorf("deps %v, want base met", d)
	}
	r := fwtest.Run(t, dir, "work-once", "--list", "--tier", "mid", "--agent-id", "w")
	if !strings.Contains(r.Stdout, "\tmet:base\tai\t") {
		t.Errorf("--list deps cell: %v", r)
	}
}

// anchor uses --agent-id as the model name when --model is absent, and `a`
// is a substring of `claude sonnet 5`.
func TestDiffAgentIDIsNeverModelName(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/named.md", Fields: "Preferred models: Claude Sonnet 5"},
		fwtest.Plan{Rel: "features/hard.md", Fields: "Preferred models: Claude Sonnet 5, reasoner"},
	)
	m := fwtest.WorkOnceJSON(t, dir, "--tier", "small", "--agent-id", "a")
	if w := m["worker"].(map[string]any); w["model"] != "" {
		t.Errorf("worker.model = %v, want empty (never the agent id)", w["model"])
	}
	if p := fwtest.JSONPlan(t, m, "features/named.md"); p["fit"] != "unknown" {
		t.Errorf("named.md fit %v, want unknown", p["fit"])
	}
	if p := fwtest.JSONPlan(t, m, "features/hard.md"); p["fit"] != "underqualified" || p["eligible"] != false {
		t.Errorf("hard.md: %v, want underqualified", p)
	}
	// An agent id whose words would match is still not a model name.
	m = fwtest.WorkOnceJSON(t, dir, "--tier", "small", "--agent-id", "claude-sonnet-5-worker")
	if p := fwtest.JSONPlan(t, m, "features/hard.md"); p["fit"] != "underqualified" {
		t.Errorf("agent id claude-sonnet-5-worker: hard.md fit %v, want underqualified", p["fit"])
	}
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--tier", "small", "--agent-id", "claude-sonnet-5-worker", "--no-dep-check"), 0)
	if !fwtest.Exists(dir, "features/hard.md") {
		t.Errorf("hard.md claimed by a small worker named like the model")
	}
	// The same agent with --model naming the model matches.
	m = fwtest.WorkOnceJSON(t, dir, "--tier", "small", "--agent-id", "a", "--model", "claude-sonnet-5")
	if p := fwtest.JSONPlan(t, m, "features/hard.md"); p["fit"] != "good" {
		t.Errorf("with --model: hard.md fit %v, want good", p["fit"])
	}
}

// anchor matches names by substring (either way) or by any 4+ letter word.
func TestDiffModelNamesMatchByWords(t *testing.T) {
	t.Parallel()
	cases := []struct{ model, preferred, fit string }{
		{"Qwen3 32B", "Qwen", "unknown"},
		{"Llama 3.1 70B", "Llama 3", "unknown"},
		{"claude-sonnet-4", "Sonnet 45", "unknown"},
		{"gpt-4o", "gpt-4o-mini", "unknown"},
		{"Qwen/Qwen3-32B-FP8", "Qwen3 32B", "good"},
		{"claude-sonnet-5", "Claude Sonnet 5", "good"},
		{"GROK_4.5", "Grok 4.5", "good"},
	}
	for _, c := range cases {
		t.Run(c.model+"/"+c.preferred, func(t *testing.T) {
			t.Parallel()
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/p.md", Fields: "Preferred models: " + c.preferred})
			m := fwtest.WorkOnceJSON(t, dir, "--tier", "mid", "--model", c.model, "--agent-id", "w")
			if p := fwtest.JSONPlan(t, m, "features/p.md"); p["fit"] != c.fit {
				t.Errorf("model %q vs %q: fit %v, want %s", c.model, c.preferred, p["fit"], c.fit)
			}
		})
	}
}

// anchor turns an unknown tier into mid and crashes (exit 1) on an unknown
// endpoint; both are hard errors here and claim nothing.
func TestDiffUnknownTierOrEndpointExit2(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/p.md", Fields: "Preferred models: mid"})
	reg := filepath.Join(dir, "endpoints.yaml")
	if err := os.WriteFile(reg, []byte("endpoints:\n  - name: laptop\n    tier: swarm\n    model: Qwen/Qwen3-8B\n  - name: odd\n    tier: gigantic\n    model: m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		in   string
	}{
		{"UnknownTier", []string{"--tier", "mdi"}, "mdi"},
		{"UnknownEndpoint", []string{"--endpoint", "nope", "--registry", reg}, "nope"},
		{"UnknownEndpointDefaultRegistry", []string{"--endpoint", "nope"}, "nope"},
		{"UnknownTierInRegistry", []string{"--endpoint", "odd", "--registry", reg}, "gigantic"},
		{"MissingRegistry", []string{"--endpoint", "laptop", "--registry", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
	}
	for _, c := range cases {
		for _, mode := range []string{"--once", "--list"} {
			r := fwtest.Run(t, dir, append([]string{"work-once", mode, "--agent-id", "w"}, c.args...)...)
			if r.Code != 2 || !strings.Contains(r.Stderr, c.in) {
				t.Errorf("%s %s: want exit 2 naming %q: %v", c.name, mode, c.in, r)
			}
		}
	}
	if !fwtest.Exists(dir, "features/p.md") {
		t.Fatal("a plan was claimed")
	}
	// The known endpoint works: swarm → small, model from the registry.
	m := fwtest.WorkOnceJSON(t, dir, "--endpoint", "laptop", "--agent-id", "w")
	if w := m["worker"].(map[string]any); w["tier"] != "small" || w["model"] != "Qwen/Qwen3-8B" {
		t.Errorf("endpoint worker: %v", w)
	}
}

// anchor's park drops the lease, so return sends every parked plan to features/.
func TestDiffParkedBugReturnsToBugs(t *testing.T) {
	t.Parallel()
	t.Run("ParkedFromBugs", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/b.md", Fields: "Preferred models: mid"})
		fwtest.Want(t, fwtest.Run(t, dir, "park", "b", "--to", "blocked"), 0)
		r := fwtest.Run(t, dir, "return", "b")
		fwtest.Want(t, r, 0)
		if !fwtest.Exists(dir, "bugs/b.md") || fwtest.Exists(dir, "features/b.md") {
			t.Fatalf("want bugs/b.md: %v", r)
		}
	})
	t.Run("ClaimedFromBugsThenParked", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/b.md", Fields: "Preferred models: mid"})
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w"), 0)
		fwtest.Want(t, fwtest.Run(t, dir, "park", "in-progress/b.md", "--to", "ambiguous", "--agent-id", "w"), 0)
		r := fwtest.Run(t, dir, "return", "ambiguous/b.md")
		fwtest.Want(t, r, 0)
		if !fwtest.Exists(dir, "bugs/b.md") || fwtest.Exists(dir, "features/b.md") {
			t.Fatalf("want bugs/b.md: %v", r)
		}
	})
	t.Run("WorkOnceParkAndReturnReady", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/b.md", Fields: "Preferred models: mid"})
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w"), 0)
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "b", "--park", "blocked", "--agent-id", "w"), 0)
		r := fwtest.Run(t, dir, "work-once", "--slug", "b", "--return-ready", "--agent-id", "w")
		fwtest.Want(t, r, 0)
		if !fwtest.Exists(dir, "bugs/b.md") || !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "bugs/b.md") {
			t.Fatalf("want bugs/b.md: %v", r)
		}
	})
}

// anchor treats an unreadable lease as a permanent "race".
func TestDiffCorruptLeaseReportedAndRecoverable(t *testing.T) {
	t.Parallel()
	t.Run("ReadyPlan", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/x.md", Fields: "Preferred models: mid"})
		fwtest.PutRaw(t, dir, ".leases/features__x.md.json", `{"plan": "features/x.md", "agent_id": "w1", "claimed_at": 17`)
		fwtest.Age(t, dir, ".leases/features__x.md.json") // not one being written right now
		r := fwtest.Run(t, dir, "check")
		fwtest.Want(t, r, 1)
		if !strings.Contains(r.Stdout, ".leases/features__x.md.json") || !strings.Contains(r.Stdout, "corrupt") {
			t.Errorf("check must report the corrupt lease: %v", r)
		}
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w2"), 1)
		r = fwtest.Run(t, dir, "recover", "features/x.md", "--agent-id", "w2")
		fwtest.Want(t, r, 0)
		if fwtest.LeaseOf(t, dir, "features/x.md") != nil {
			t.Fatalf("recover left the corrupt lease: %v", r)
		}
		fwtest.Want(t, fwtest.Run(t, dir, "check"), 0)
		r = fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w2")
		fwtest.Want(t, r, 0)
		if !fwtest.Exists(dir, "in-progress/x.md") || fwtest.ActiveOwner(t, dir, "in-progress/x.md") != "w2" {
			t.Fatalf("plan not claimable after recover: %v", r)
		}
	})
	t.Run("InProgressPlan", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/x.md", Fields: "Preferred models: mid"})
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w1"), 0)
		fwtest.PutRaw(t, dir, ".leases/in-progress__x.md.json", "")
		fwtest.Age(t, dir, ".leases/in-progress__x.md.json")
		r := fwtest.Run(t, dir, "check")
		fwtest.Want(t, r, 1)
		if !strings.Contains(r.Stdout, ".leases/in-progress__x.md.json") {
			t.Errorf("check must report the corrupt lease: %v", r)
		}
		r = fwtest.Run(t, dir, "work-once", "--recover", "--slug", "x", "--agent-id", "w2")
		fwtest.Want(t, r, 0)
		if fwtest.ActiveOwner(t, dir, "in-progress/x.md") != "w2" {
			t.Fatalf("owner after recover: %v", fwtest.LeaseOf(t, dir, "in-progress/x.md"))
		}
		fwtest.Want(t, fwtest.Run(t, dir, "check"), 0)
	})
}

// anchor's heartbeat creates or takes over any lease that is not actively foreign.
func TestDiffHeartbeatRespectsOwnership(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "features/free.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "in-progress/orphan.md", Fields: "Preferred models: mid"},
	)
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--slug", "a", "--agent-id", "owner"), 0)
	before := fwtest.LeaseOf(t, dir, "in-progress/a.md")

	r := fwtest.Run(t, dir, "work-once", "--heartbeat", "in-progress/a.md", "--agent-id", "intruder")
	fwtest.Want(t, r, 2)
	if l := fwtest.LeaseOf(t, dir, "in-progress/a.md"); l["agent_id"] != "owner" || l["expires_at"] != before["expires_at"] {
		t.Errorf("non-owner heartbeat changed the lease: %v", l)
	}
	// An expired lease is no more the intruder's to renew.
	fwtest.PutLease(t, dir, "in-progress/a.md", fwtest.AnchorLease("in-progress/a.md", "owner", 100, 10))
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--heartbeat", "in-progress/a.md", "--agent-id", "intruder"), 2)
	if l := fwtest.LeaseOf(t, dir, "in-progress/a.md"); l["agent_id"] != "owner" {
		t.Errorf("heartbeat took over an expired lease: %v", l)
	}
	for _, rel := range []string{"in-progress/orphan.md", "features/free.md", "in-progress/ghost.md"} {
		r = fwtest.Run(t, dir, "work-once", "--heartbeat", rel, "--agent-id", "intruder")
		fwtest.Want(t, r, 2)
		if fwtest.LeaseOf(t, dir, rel) != nil {
			t.Errorf("heartbeat on unleased %s created a lease", rel)
		}
	}
}

// anchor's --release ignores --agent-id and always forces.
func TestDiffReleaseRespectsOwnership(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid"})
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "owner"), 0)
	for _, args := range [][]string{
		{"work-once", "--release", "in-progress/a.md", "--agent-id", "intruder"},
		{"release", "in-progress/a.md", "--agent-id", "intruder"},
	} {
		r := fwtest.Run(t, dir, args...)
		fwtest.Want(t, r, 2)
		if !strings.Contains(r.Stderr, "owner") {
			t.Errorf("refusal should name the owner: %v", r)
		}
		if !fwtest.Exists(dir, "in-progress/a.md") || fwtest.ActiveOwner(t, dir, "in-progress/a.md") != "owner" {
			t.Fatalf("non-owner release took effect: %v", r)
		}
	}
	r := fwtest.Run(t, dir, "work-once", "--release", "in-progress/a.md", "--agent-id", "intruder", "--force")
	fwtest.Want(t, r, 0)
	if fwtest.Exists(dir, "in-progress/a.md") || !fwtest.Exists(dir, "features/a.md") || fwtest.LeaseOf(t, dir, "in-progress/a.md") != nil {
		t.Fatalf("--force release: %v", r)
	}
}

// anchor's release only drops the lease and strands the plan in in-progress/.
func TestDiffReleaseReturnsPlanToOriginLane(t *testing.T) {
	t.Parallel()
	for _, lane := range []string{"bugs", "features"} {
		for _, how := range [][]string{{"work-once", "--release"}, {"release"}} {
			t.Run(lane+"/"+how[0], func(t *testing.T) {
				t.Parallel()
				dir := fwtest.NewTree(t, fwtest.Plan{Rel: lane + "/r.md", Fields: "Preferred models: mid"})
				fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w"), 0)
				r := fwtest.Run(t, dir, append(how, "in-progress/r.md", "--agent-id", "w")...)
				fwtest.Want(t, r, 0)
				if !fwtest.Exists(dir, lane+"/r.md") || fwtest.Exists(dir, "in-progress/r.md") || fwtest.LeaseOf(t, dir, "in-progress/r.md") != nil {
					t.Fatalf("want %s/r.md and no lease: %v", lane, r)
				}
				if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), lane+"/r.md") {
					t.Errorf("release should print the new path: %v", r)
				}
				// Released, it is claimable again.
				fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w2"), 0)
			})
		}
	}
}

// anchor's evidence glob `*-S.md` over-matches, and any commit touching the
// path counts; only a file that was in .plans/completed/ counts here.
func TestDiffGitEvidenceOnlyCountsCompletedPaths(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/needs-old.md", Fields: "Preferred models: mid; Depends on: old"},
		fwtest.Plan{Rel: "features/needs-login.md", Fields: "Preferred models: mid; Depends on: login"},
		fwtest.Plan{Rel: "features/needs-fix-login.md", Fields: "Preferred models: mid; Depends on: fix-login"},
		fwtest.Plan{Rel: "features/needs-sso.md", Fields: "Preferred models: mid; Depends on: sso"},
	)
	testkit.Git(t, dir, "init", "-q")
	// old.md finished and was later cleaned out of completed/.
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "completed/old.md"}, time.Hour)
	// fix-login.md was only ever a feature, never completed.
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "features/fix-login.md"}, time.Hour)
	// 2026-01-02-sso-login.md finished: evidence for sso-login, not for login or sso.
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "completed/2026-01-02-sso-login.md"}, time.Hour)
	testkit.Git(t, dir, "add", ".plans/completed/old.md", ".plans/features/fix-login.md", ".plans/completed/2026-01-02-sso-login.md")
	testkit.Git(t, dir, "commit", "-q", "-m", "add")
	testkit.Git(t, dir, "rm", "-q", ".plans/completed/old.md", ".plans/features/fix-login.md", ".plans/completed/2026-01-02-sso-login.md")
	testkit.Git(t, dir, "commit", "-q", "-m", "clean up")

	m := fwtest.WorkOnceJSON(t, dir, "--agent-id", "w")
	cases := map[string]bool{
		"features/needs-old.md":       true,  // was in completed/
		"features/needs-login.md":     false, // anchor: `*-login.md` matches fix-login / sso-login
		"features/needs-fix-login.md": false, // its only evidence is a features/ path
		"features/needs-sso.md":       false, // a prefix of a completed slug is not the slug
	}
	for rel, met := range cases {
		p := fwtest.JSONPlan(t, m, rel)
		d := p["deps"].(map[string]any)
		if d["met"] != met {
			t.Errorf("%s: deps %v, want met=%v", rel, d, met)
		}
		if !met {
			if u := d["unmet"].([]any); len(u) != 1 || u[0].(map[string]any)["reason"] != "missing" {
				t.Errorf("%s: unmet %v, want one missing", rel, u)
			}
		}
	}
	// A bare pick takes the plan whose dependency git shows completed.
	r := fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w")
	fwtest.Want(t, r, 0)
	if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "in-progress/needs-old.md") {
		t.Errorf("pick: %v", r)
	}
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w"), 1)
}

// anchor's rename overwrites an in-progress plan of the same name.
func TestDiffClaimNeverOverwrites(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/x.md", Fields: "Priority: P1; Preferred models: mid", Body: "the ready one\n"},
		fwtest.Plan{Rel: "features/y.md", Fields: "Preferred models: mid"},
	)
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "in-progress/x.md", Fields: "Preferred models: mid", Body: "the claimed one\n"}, time.Hour)
	ready, claimed := fwtest.ReadRel(t, dir, "features/x.md"), fwtest.ReadRel(t, dir, "in-progress/x.md")

	r := fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w")
	fwtest.Want(t, r, 0)
	if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "in-progress/y.md") {
		t.Fatalf("bare pick must skip features/x.md and take y: %v", r)
	}
	r = fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w")
	fwtest.Want(t, r, 1)
	r = fwtest.Run(t, dir, "work-once", "--slug", "x", "--agent-id", "w")
	if r.Code == 0 {
		t.Fatalf("named claim over an existing in-progress/x.md succeeded: %v", r)
	}
	if fwtest.ReadRel(t, dir, "features/x.md") != ready || fwtest.ReadRel(t, dir, "in-progress/x.md") != claimed {
		t.Fatal("a plan file changed")
	}
	if fwtest.LeaseOf(t, dir, "features/x.md") != nil || fwtest.LeaseOf(t, dir, "in-progress/x.md") != nil {
		t.Error("a failed claim left a lease behind")
	}
}

// A claimer killed between steps leaves a ready-path lease from a dead pid;
// anchor leaves the plan stuck for the TTL, or unleased in in-progress/.
func TestDiffHalfDoneClaimsAreRepaired(t *testing.T) {
	t.Parallel()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	deadLease := func(rel string) map[string]any {
		l := fwtest.AnchorLease(rel, "dead-agent", 0, 3600)
		// Same boot and pid namespace as the repairing process, so the pid is proof.
		l["host"], l["pid"], l["pid_scope"], l["token"] = host, testkit.DeadPID(t), planfs.PIDScope(), "0123456789abcdef"
		return l
	}
	t.Run("MovedByDeadLocalClaimerIsUndone", func(t *testing.T) {
		t.Parallel()
		// Killed after the move, before it returned: no agent ever got the
		// path, so the plan goes back and is claimable at once.
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "in-progress/h.md", Fields: "Preferred models: mid"})
		fwtest.PutLease(t, dir, "features/h.md", deadLease("features/h.md"))
		r := fwtest.Run(t, dir, "repair")
		fwtest.Want(t, r, 0)
		if !fwtest.Exists(dir, "features/h.md") || fwtest.Exists(dir, "in-progress/h.md") {
			t.Fatalf("claim not undone: %v", r)
		}
		if fwtest.LeaseOf(t, dir, "features/h.md") != nil || fwtest.LeaseOf(t, dir, "in-progress/h.md") != nil {
			t.Error("leases left after the undo")
		}
		fwtest.Want(t, fwtest.Run(t, dir, "check"), 0)
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w"), 0)
	})
	t.Run("MovedByRemoteClaimerIsFinished", func(t *testing.T) {
		t.Parallel()
		// A claimer we cannot see (anchor, or another host) that stopped
		// after the move, past the grace: its claim is finished for it.
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "in-progress/h.md", Fields: "Preferred models: mid"})
		fwtest.PutLease(t, dir, "features/h.md", fwtest.AnchorLease("features/h.md", "far-agent", 120, 3600))
		r := fwtest.Run(t, dir, "repair")
		fwtest.Want(t, r, 0)
		l := fwtest.LeaseOf(t, dir, "in-progress/h.md")
		if l == nil || l["agent_id"] != "far-agent" || l["origin"] != "features/h.md" || l["plan"] != "in-progress/h.md" {
			t.Fatalf("in-progress lease after repair: %v (%v)", l, r)
		}
		if fwtest.LeaseOf(t, dir, "features/h.md") != nil {
			t.Error("ready-path lease not removed")
		}
		fwtest.Want(t, fwtest.Run(t, dir, "check"), 0)
		// The finished claim belongs to its agent until it expires.
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--recover", "--slug", "h", "--agent-id", "w"), 2)
	})
	t.Run("ReadyPathLeaseFromDeadClaimer", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/h.md", Fields: "Preferred models: mid"})
		fwtest.PutLease(t, dir, "features/h.md", deadLease("features/h.md"))
		r := fwtest.Run(t, dir, "repair")
		fwtest.Want(t, r, 0)
		if fwtest.LeaseOf(t, dir, "features/h.md") != nil {
			t.Fatalf("dead claimer's ready-path lease kept: %v", r)
		}
		r = fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w")
		fwtest.Want(t, r, 0)
		if !fwtest.IsPlanPath(dir, fwtest.LastLine(r.Stdout), "in-progress/h.md") {
			t.Fatalf("plan not claimable: %v", r)
		}
	})
	t.Run("LiveClaimerUntouched", func(t *testing.T) {
		t.Parallel()
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/h.md", Fields: "Preferred models: mid"})
		l := fwtest.AnchorLease("features/h.md", "live-agent", 0, 3600)
		l["host"], l["pid"], l["pid_scope"] = host, os.Getpid(), planfs.PIDScope()
		fwtest.PutLease(t, dir, "features/h.md", l)
		fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w"), 1)
		if got := fwtest.LeaseOf(t, dir, "features/h.md"); got == nil || got["pid"] != float64(os.Getpid()) {
			t.Fatalf("live claimer's lease removed: %v", got)
		}
	})
}
