package model

import (
	"strings"
	"testing"
)

func TestCheckBranch(t *testing.T) {
	ok := []string{"feature/x", "feature/a-b_c.d", "feat/x", "feature/x.locks", "feature/-x"}
	bad := map[string]string{
		"feature/x.lock": ".lock", "feature/.x": "starts with .", "feature/a..b": "..", "feature/x.": "ends with .",
		"feature/a b": "contains", "feature/a~b": "contains", "feature/a@{b": "@{", "-x": "starts with -",
		"feature//x": "empty", "feature/": "empty", "@": "not a branch", "": "not a branch", "feature/a\x01": "contains",
	}
	for _, name := range ok {
		if why := CheckBranch(name); why != "" {
			t.Errorf("CheckBranch(%q) = %q, want ok", name, why)
		}
	}
	for name, want := range bad {
		if why := CheckBranch(name); !strings.Contains(why, want) {
			t.Errorf("CheckBranch(%q) = %q, want %q", name, why, want)
		}
	}
}

func TestFeatureBranch(t *testing.T) {
	for in, want := range map[string]string{"x": "feature/x", "feat/y": "feat/y", "a b": "feature/a-b", "": "feature/work", "x.lock": "feature/x.lock"} {
		if got := FeatureBranch(in); got != want {
			t.Errorf("FeatureBranch(%q) = %q, want %q", in, got, want)
		}
	}
}

// A plan no claim can take (a name too long for its lease file) or no
// branch-making worker can take (x.lock) is skipped with a reason, and the
// plans after it move up.
func TestDecideSkipsUnclaimablePlans(t *testing.T) {
	long := "features/" + strings.Repeat("a", 240-len(".md")) + ".md"
	s := &Snapshot{Plans: []Plan{
		mkPlan(long, 1, "- **Priority:** P1"),
		mkPlan("features/x.lock.md", 2, "- **Priority:** P1"),
		mkPlan("features/next.md", 3),
	}}
	rows := Decide(s, midWorker, Options{Now: now})
	if got := picks(s, midWorker, Options{Now: now}); strings.Join(got, " ") != "features/x.lock.md features/next.md" {
		t.Errorf("claim-only picks: %v", got)
	}
	if r := rowOf(rows, long); r.Eligible || !strings.Contains(r.Reason, "file name is 240 bytes, over 237") {
		t.Errorf("long name row: %+v", r)
	}
	opt := Options{Now: now, NeedBranch: true}
	rows = Decide(s, midWorker, opt)
	if r := rowOf(rows, "features/x.lock.md"); r.Eligible || !strings.Contains(r.Reason, "git refuses its branch name feature/x.lock") {
		t.Errorf("x.lock row: %+v", r)
	}
	if r := rowOf(rows, "features/next.md"); r.Rank != 1 {
		t.Errorf("the plan after them should rank 1: %+v", r)
	}
	if MaxPlanName != 237 {
		t.Errorf("MaxPlanName = %d", MaxPlanName)
	}
	// 237 bytes still fits: in-progress__<name>.json is exactly 255.
	fits := Plan{Name: strings.Repeat("b", 237)}
	if why := ClaimProblem(&fits, true); why != "" {
		t.Errorf("237-byte name: %s", why)
	}
}

func TestLeaseImplausible(t *testing.T) {
	for _, c := range []struct {
		l    Lease
		want string
	}{
		{Lease{ClaimedAt: now, ExpiresAt: now + 3600}, ""},
		{Lease{ClaimedAt: now, ExpiresAt: now + MaxLeaseTTL}, ""},
		{Lease{ClaimedAt: now + 30, ExpiresAt: now + 3600}, ""},
		{Lease{ClaimedAt: now, ExpiresAt: now + MaxLeaseTTL + 60}, "more than 7 ahead"},
		{Lease{ClaimedAt: now + 120, ExpiresAt: now + 3600}, "claimed 120 s in the future"},
		{Lease{Corrupt: "x", ExpiresAt: now + 1e9}, ""},
	} {
		if got := c.l.Implausible(now); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.l, got, c.want)
		}
	}
}

func TestLeaseSpan(t *testing.T) {
	for ttl, want := range map[float64]float64{0.1: 1, 3600: 3600, 1e12: MaxLeaseTTL} {
		if got := LeaseSpan(ttl); got != want {
			t.Errorf("LeaseSpan(%v) = %v, want %v", ttl, got, want)
		}
	}
}
