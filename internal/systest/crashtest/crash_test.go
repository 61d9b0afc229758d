package crashtest

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// TestCrashAtEveryStep kills a verb with SIGKILL right after each step of
// claim, release, park, return, complete, promote and recover, then runs a
// normal worker (which repairs). Afterwards every plan is in exactly one lane
// with unchanged content, and none is stuck: each is claimable, or held by a
// lease, or where the interrupted verb was taking it.
func TestCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	cases := []struct {
		step string
		// setup runs first, without a failpoint; args is the verb killed.
		setup [][]string
		args  []string
		// from is the victim's first lane; features when empty.
		from string
		// want is the lane the plan must end in after repair.
		want string
		// leased reports whether it must then hold a live lease.
		leased bool
	}{
		{step: "claim:ready-lease", args: []string{"work-once", "--once", "--agent-id", "dead"}, want: "features"},
		// The claimer died before writing its lease: no agent has the plan, so the claim is undone.
		{step: "claim:moved", args: []string{"work-once", "--once", "--agent-id", "dead"}, want: "features"},
		// Its lease written, the claim stands (held until the lease expires).
		{step: "claim:lease", args: []string{"work-once", "--once", "--agent-id", "dead"}, want: "in-progress", leased: true},
		{step: "release:moved", setup: [][]string{{"work-once", "--once", "--agent-id", "dead"}},
			args: []string{"release", "in-progress/victim.md", "--agent-id", "dead"}, want: "features"},
		{step: "park:moved", setup: [][]string{{"work-once", "--once", "--agent-id", "dead"}},
			args: []string{"park", "victim", "--to", "blocked", "--agent-id", "dead"}, want: "blocked"},
		{step: "return:moved", setup: [][]string{{"work-once", "--once", "--agent-id", "dead"}},
			args: []string{"return", "victim", "--agent-id", "dead"}, want: "features"},
		{step: "complete:moved", setup: [][]string{{"work-once", "--once", "--agent-id", "dead"}},
			args: []string{"complete", "victim", "--agent-id", "dead"}, want: "completed"},
		{step: "promote:moved", from: "drafts", args: []string{"promote", "victim", "--to", "bugs"}, want: "bugs"},
		{step: "recover:locked", setup: [][]string{{"work-once", "--once", "--agent-id", "dead", "--lease-ttl", "1"}},
			args: []string{"recover", "victim", "--agent-id", "rescuer"}, want: "in-progress"},
	}
	for _, c := range cases {
		t.Run(c.step, func(t *testing.T) {
			from := c.from
			if from == "" {
				from = "features"
			}
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: from + "/victim.md", Fields: "Priority: P1; Preferred models: mid"}, fwtest.Plan{Rel: "features/bystander.md"})
			before := byName(fwtest.Contents(t, dir))
			for _, s := range c.setup {
				if r := fwtest.Run(t, dir, s...); r.Code != 0 {
					t.Fatalf("setup %v: %v", s, r)
				}
			}
			if c.step == "recover:locked" {
				expireLease(t, dir, "in-progress/victim.md")
			}
			r := fwtest.RunEnv(t, dir, []string{planfs.FailpointEnv + "=" + c.step}, c.args...)
			if r.Code != -int(syscall.SIGKILL) {
				t.Fatalf("%v was not killed at %s: %v", c.args, c.step, r)
			}

			// A normal worker run repairs whatever the dead one left.
			fwtest.Run(t, dir, "repair")
			if r := fwtest.Run(t, dir, "work-once", "--list", "--agent-id", "next"); strings.Contains(r.Stderr, "the next claim") {
				t.Errorf("a second run still repairs: %v", r)
			}
			after := fwtest.Contents(t, dir)
			if len(after) != len(before) {
				t.Fatalf("plans before %v, after %v", fwtest.SortedKeys(before), fwtest.SortedKeys(after))
			}
			for rel, body := range after {
				if before[rel[strings.Index(rel, "/")+1:]] != body {
					t.Errorf("%s: content changed", rel)
				}
			}
			if after[c.want+"/victim.md"] == "" {
				t.Fatalf("victim not in %s/: %v", c.want, fwtest.SortedKeys(after))
			}
			list := listJSONFor(t, dir, "next")
			for _, p := range list.Plans {
				switch {
				case p.Lane == "features" || p.Lane == "bugs":
					if !p.Eligible {
						t.Errorf("%s is ready but not claimable: lease %+v", p.Rel, p.Lease)
					}
				case p.Lane == "in-progress":
					if p.Lease == nil || p.Lease.Expired && c.step != "recover:locked" {
						t.Errorf("%s in progress without a live lease: %+v", p.Rel, p.Lease)
					}
				}
			}
			if c.step == "recover:locked" {
				// The lock died with its process: recover works at once.
				if r := fwtest.Run(t, dir, "recover", "victim", "--agent-id", "rescuer"); r.Code != 0 {
					t.Fatalf("recover after crash: %v", r)
				}
				if got := fwtest.LeaseOf(t, dir, "in-progress/victim.md")["agent_id"]; got != "rescuer" {
					t.Fatalf("recovered lease held by %v", got)
				}
			}
			if r := fwtest.Run(t, dir, "check"); strings.Contains(r.Stdout, "without a lease") || strings.Contains(r.Stdout, "orphaned") {
				t.Errorf("check after repair: %v", r)
			}
		})
	}
}

// byName re-keys plan contents by file name, so a moved plan matches.
func byName(m map[string]string) map[string]string {
	out := map[string]string{}
	for rel, body := range m {
		out[rel[strings.Index(rel, "/")+1:]] = body
	}
	return out
}

func expireLease(t *testing.T, dir, rel string) {
	t.Helper()
	l := fwtest.LeaseOf(t, dir, rel)
	l["expires_at"] = l["claimed_at"]
	b, _ := json.Marshal(l)
	fwtest.PutRaw(t, dir, ".leases/"+strings.ReplaceAll(rel, "/", "__")+".json", string(b))
}

type listedPlan struct {
	Rel      string `json:"rel"`
	Lane     string `json:"lane"`
	Eligible bool   `json:"eligible"`
	Lease    *struct {
		AgentID string `json:"agent_id"`
		Expired bool   `json:"expired"`
	} `json:"lease"`
}

func listJSONFor(t *testing.T, dir, agent string) struct{ Plans []listedPlan } {
	t.Helper()
	r := fwtest.Run(t, dir, "work-once", "--list", "--json", "--agent-id", agent)
	var out struct{ Plans []listedPlan }
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("--list --json: %v\n%v", err, r)
	}
	return out
}
