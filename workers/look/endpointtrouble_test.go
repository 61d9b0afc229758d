package look

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/agentout"
)

// Rate limits and overloads back off 30 s, doubling to 10 min while the
// trouble comes back, or the retry-after given; auth disables; a spent
// window shuts until its reset.
func TestEndpointStateMachine(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	rate := EndTrouble{Kind: agentout.RateLimited, Status: 429, Why: "rate limited"}
	var st EndpointState
	had := false
	at := now
	var waits []time.Duration
	for range 7 {
		st = NextState("cc", st, had, rate, at)
		had = true
		waits = append(waits, st.Until.Sub(at))
		at = st.Until.Add(time.Second) // tried again once it passed, and limited again
	}
	want := []time.Duration{30, 60, 120, 240, 480, 600, 600}
	for i, w := range want {
		if waits[i] != w*time.Second {
			t.Errorf("backoff %d: %v, want %v (all %v)", i, waits[i], w*time.Second, waits)
		}
	}
	if st.State != EndpointBackingOff || st.Problem(at) != "" || !strings.Contains(st.Problem(st.Until.Add(-time.Second)), "endpoint cc is backing-off until") {
		t.Errorf("state %+v: %q", st, st.Problem(at))
	}
	// Long after the last backoff, it starts again at 30 s.
	if s := NextState("cc", st, true, rate, st.Until.Add(time.Hour)); s.Backoff != 30 {
		t.Errorf("after a quiet hour: %+v", s)
	}
	// A retry-after wins, and doubling still goes on under it.
	if s := NextState("cc", EndpointState{}, false, EndTrouble{Kind: agentout.Overloaded, RetryAfter: 5 * time.Second}, now); s.Until != now.Add(5*time.Second) || s.State != EndpointBackingOff {
		t.Errorf("retry-after: %+v", s)
	}
	auth := NextState("cc", st, true, EndTrouble{Kind: agentout.AuthFailed, Status: 401, Why: "Invalid API key"}, now)
	if auth.State != EndpointDisabled || !auth.Until.IsZero() || !strings.Contains(auth.Problem(now.Add(365*24*time.Hour)), "disabled") {
		t.Errorf("auth: %+v", auth)
	}
	reset := now.Add(3 * time.Hour)
	win := NextState("cc", EndpointState{}, false, EndTrouble{Kind: agentout.UsageWindow, Reset: reset}, now)
	if win.State != EndpointShut || win.Until != reset || win.Reset != reset || win.Problem(reset) != "" || win.Problem(reset.Add(-time.Second)) == "" {
		t.Errorf("window: %+v", win)
	}
	if w := NextState("cc", EndpointState{}, false, EndTrouble{Kind: agentout.UsageWindow}, now); w.Until != now.Add(unsaidWindow) {
		t.Errorf("a window with no reset said: %+v", w)
	}
	if w := NextState("cc", EndpointState{}, false, EndTrouble{Kind: agentout.UsageWindow, Reset: now.Add(100 * 365 * 24 * time.Hour)}, now); w.Until != now.Add(maxShut) {
		t.Errorf("a reset a century ahead: %+v", w)
	}
}

func TestEndpointStore(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	if why := EndpointProblem(dir, "cc", now); why != "" {
		t.Errorf("no state: %q", why)
	}
	st := NextState("cc", EndpointState{}, false, EndTrouble{Kind: agentout.UsageWindow, Reset: now.Add(time.Minute), Why: "spent"}, now)
	if err := WriteEndpoint(dir, st); err != nil {
		t.Fatal(err)
	}
	if why := EndpointProblem(dir, "cc", now); !strings.Contains(why, "endpoint cc is shut until") || !strings.Contains(why, "spent") {
		t.Errorf("shut: %q", why)
	}
	if got := endpointWarnings(dir, now); len(got) != 1 || got[0].File != "var/fleet/endpoints/cc.json" {
		t.Errorf("warnings: %+v", got)
	}
	if EndpointProblem(dir, "cc", now.Add(time.Minute)) != "" || EndpointProblem(dir, "other", now) != "" {
		t.Error("past the reset, or another endpoint, is open")
	}
	if err := clearEndpoint(dir, "cc"); err != nil || EndpointProblem(dir, "cc", now) != "" || clearEndpoint(dir, "cc") != nil {
		t.Errorf("cleared: %v", err)
	}
}

func TestFailureCounts(t *testing.T) {
	dir := t.TempDir()
	for i := 1; i <= 3; i++ {
		if n, err := AddFailure(dir, "a", "exit 1"); n != i || err != nil {
			t.Fatalf("failure %d: %d %v", i, n, err)
		}
	}
	if f := PlanFailures(dir, "a"); f.Count != 3 || f.Last != "exit 1" || PlanFailures(dir, "b").Count != 0 {
		t.Errorf("counts: %+v", f)
	}
	if err := ClearFailures(dir, "a"); err != nil || PlanFailures(dir, "a").Count != 0 {
		t.Errorf("cleared: %v", err)
	}
}
