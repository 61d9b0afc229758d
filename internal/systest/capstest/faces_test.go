package capstest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// claudeLease is a fleetwatch lease of the claude endpoint on rel, on a
// host of its own, ending in ttl seconds.
func claudeLease(rel, agent string, ttl float64) map[string]any {
	l := fwtest.AnchorLease(rel, agent, 10, ttl)
	l["host"], l["tier"], l["endpoint"], l["provider"] = "gpu-"+agent, "reasoner", "claude", "anthropic"
	return l
}

// TestFullCapRefusesAndShowsEverywhere: with three live runs of
// endpoint claude under `endpoint: {claude: 3}`, a claude worker claims
// nothing (exit 1, naming the cap and its count), --list says so, and
// the board's JSON carries the warning; a worker of another
// endpoint claims all the same; once one of the three leases has
// expired, the claude worker claims, and its lease records what it
// runs as.
func TestFullCapRefusesAndShowsEverywhere(t *testing.T) {
	t.Parallel()
	plans := []fwtest.Plan{{Rel: "features/next.md"}, {Rel: "features/other.md"}}
	for _, n := range []string{"a", "b", "c"} {
		plans = append(plans, fwtest.Plan{Rel: "in-progress/" + n + ".md"})
	}
	dir := fwtest.NewTree(t, plans...)
	for _, n := range []string{"a", "b", "c"} {
		fwtest.PutLease(t, dir, "in-progress/"+n+".md", claudeLease("in-progress/"+n+".md", "w-"+n, 3600))
	}
	write(t, dir, "fleetwatch.yaml", "limits:\n  endpoint: {claude: 3}\n")
	write(t, dir, "endpoints.yaml", "endpoints:\n  - {name: claude, tier: reasoner, model: m, provider: anthropic}\n  - {name: local, tier: mid, model: m}\n")
	const full = "limits: endpoint claude has 3 of 3 live runs"

	r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "w1", "--endpoint", "claude")
	if r.Code != fwtest.ExitNothing || !strings.Contains(r.Stderr, full) || r.Stdout != "" || !fwtest.Exists(dir, "features/next.md") {
		t.Fatalf("a claude worker with the cap full: %v", r)
	}
	if strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("the refusal is not one line: %q", r.Stderr)
	}
	r = fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "w1", "--endpoint", "claude", "--list")
	if r.Code != 0 || !strings.Contains(r.Stderr, "# "+full+"; this worker would claim nothing") || !strings.Contains(r.Stderr, "fleetwatch.yaml: "+full) {
		t.Errorf("--list with the cap full: %v", r)
	}
	if m := fwtest.WorkOnceJSON(t, dir, "--agent-id", "w1", "--endpoint", "claude"); !strings.Contains(strings.Join(fwtest.JSONWarningFiles(m), ","), "fleetwatch.yaml") {
		t.Errorf("--list --json warnings: %v", m["warnings"])
	}
	if r := fwtest.Run(t, dir, "board", "--root", dir, "--json"); r.Code != 0 || !strings.Contains(r.Stdout, full) {
		t.Errorf("board --json with the cap full: %v", r)
	}
	if r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "w2", "--endpoint", "local"); r.Code != 0 {
		t.Errorf("a worker under no full cap: %v", r)
	}

	fwtest.PutLease(t, dir, "in-progress/c.md", claudeLease("in-progress/c.md", "w-c", -5))
	if r := fwtest.Run(t, dir, "board", "--root", dir, "--json"); strings.Contains(r.Stdout, "limits:") {
		t.Errorf("an expired lease still fills the cap on the board: %v", r)
	}
	r = fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "w1", "--endpoint", "claude")
	if r.Code != 0 {
		t.Fatalf("a claude worker once a lease expired: %v", r)
	}
	rel := "in-progress/" + filepath.Base(strings.TrimSpace(fwtest.LastLine(r.Stdout)))
	l := fwtest.LeaseOf(t, dir, rel)
	if l["tier"] != "reasoner" || l["endpoint"] != "claude" || l["provider"] != "anthropic" || l["host"] == "" {
		t.Errorf("the claim's lease %s records %v", rel, l)
	}
}

// TestMaxPlansStopsAtTheCap: a claim-only worker asked for five plans
// under `fleet: 2` claims two, says why it stopped, and exits 0: the
// plans it claimed stand.
func TestMaxPlansStopsAtTheCap(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, remotetest.Plans(5)...)
	write(t, dir, "fleetwatch.yaml", "limits: {fleet: 2}\n")
	r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "w1", "--max-plans", "5")
	if r.Code != 0 || strings.Count(r.Stdout, "/in-progress/") != 2 || !strings.Contains(r.Stderr, "limits: the fleet has 2 of 2 live runs") {
		t.Fatalf("--max-plans 5 under fleet: 2: %v", r)
	}
	if r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "w2"); r.Code != fwtest.ExitNothing {
		t.Errorf("a third claim: %v", r)
	}
	// A named claim is refused alike, and prints no path.
	if r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "w2", "--slug", "p004"); r.Code != fwtest.ExitNothing || r.Stdout != "" {
		t.Errorf("a named claim with the cap full: %v", r)
	}
	write(t, dir, "fleetwatch.yaml", "limits: {fleet: 3}\n")
	if r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "w2", "--slug", "p004"); r.Code != 0 || strings.Count(r.Stdout, "\n") != 1 {
		t.Errorf("a named claim prints its path once: %v", r)
	}
	// The cap is full again (3 of 3); w2 takes its own plan up again all
	// the same: that adds no run.
	if r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "w2", "--slug", "p004"); r.Code != 0 || !strings.Contains(r.Stdout, "in-progress/p004.md") {
		t.Errorf("resuming its own plan under a full cap: %v", r)
	}
	if r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "w3", "--slug", "p001"); r.Code != fwtest.ExitNothing || !strings.Contains(r.Stderr, "limits: the fleet has 3 of 3 live runs") {
		t.Errorf("another named claim under the full cap: %v", r)
	}
}

// TestBadLimitsAreOneLine: a bad limits: value stops work-once with
// exit 2 and one line naming the file and line.
func TestBadLimitsAreOneLine(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	write(t, dir, "fleetwatch.yaml", "limits:\n  fleet: 3\n  endpoint: {claude: none}\n")
	r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "w1")
	if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, `fleetwatch.yaml:3: limits: endpoint: claude: want a whole number of runs from 1 to 10000, not "none"`) {
		t.Fatalf("work-once with a bad limits: %v", r)
	}
	fwtest.OneLineError(t, r)
}

// TestGitLeaseRecordsWhatItRunsAs: a claim through the git remote
// writes the worker's tier, endpoint and provider into its lease ref,
// and another clone's worker counts it under its caps.
func TestGitLeaseRecordsWhatItRunsAs(t *testing.T) {
	t.Parallel()
	f := remotetest.NewFleet(t, remotetest.Plans(2)...)
	a, b := f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, a)
	for _, dir := range []string{a, b} {
		write(t, dir, "fleetwatch.yaml", "claims: {backend: git, remote: origin}\nlimits: {provider: {anthropic: 1}}\n")
		write(t, dir, "endpoints.yaml", "endpoints:\n  - {name: claude, tier: frontier, model: m, provider: anthropic}\n")
	}
	if r := fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "wa", "--endpoint", "claude", "--once"); r.Code != 0 {
		t.Fatalf("claim on a: %v", r)
	}
	refs := f.Leases(t)
	if len(refs) != 1 {
		t.Fatalf("lease refs %v", refs)
	}
	for _, oid := range refs {
		text := fwtest.GitOut(t, f.Bare, "show", oid+":lease.json")
		for _, want := range []string{`"tier": "frontier"`, `"endpoint": "claude"`, `"provider": "anthropic"`} {
			if !strings.Contains(text, want) {
				t.Errorf("the lease ref has no %s:\n%s", want, text)
			}
		}
	}
	r := fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "wb", "--endpoint", "claude", "--once")
	if r.Code != fwtest.ExitNothing || !strings.Contains(r.Stderr, "limits: provider anthropic has 1 of 1 live runs") {
		t.Errorf("claim on b with a's run filling the cap: %v", r)
	}
	if r := fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "wb", "--endpoint", "claude", "--list"); !strings.Contains(r.Stderr, "# limits: provider anthropic has 1 of 1 live runs") {
		t.Errorf("--list on b: %v", r)
	}
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
