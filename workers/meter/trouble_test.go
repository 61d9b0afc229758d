package meter

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/agentout"
	"github.com/fleetwatch/fleetwatch/internal/modelapi"
)

// The proxy reads the trouble of the scripted API's faults from their
// status and headers, and a later success clears it.
func TestProxySeesEndpointTrouble(t *testing.T) {
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	for _, c := range []struct {
		fault modelapi.Fault
		kind  agentout.Trouble
		after time.Duration
		reset time.Time
	}{
		{modelapi.Fault{Kind: modelapi.UsageWindow, Reset: reset, Times: 1}, agentout.UsageWindow, time.Until(reset), reset},
		{modelapi.Fault{Kind: modelapi.RateLimited, RetryAfter: 7 * time.Second, Times: 1}, agentout.RateLimited, 7 * time.Second, time.Time{}},
		{modelapi.Fault{Kind: modelapi.Overloaded, Times: 1}, agentout.Overloaded, 0, time.Time{}},
		{modelapi.Fault{Kind: modelapi.AuthFailed, Times: 1}, agentout.AuthFailed, 0, time.Time{}},
	} {
		api, err := modelapi.Start(modelapi.Script{Steps: []modelapi.Step{{Text: "## Result\nok", Fault: &c.fault}}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Start(api.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		call := func() int {
			body := `{"model":"m","messages":[],"tools":[{"name":"Bash"}]}`
			resp, err := http.Post(p.URL()+"/v1/messages", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode
		}
		if _, ok := p.Trouble(); ok {
			t.Errorf("%s: trouble before any call", c.kind)
		}
		call()
		tr, ok := p.Trouble()
		if !ok || tr.Kind != c.kind || !tr.Reset.Equal(c.reset) || (tr.RetryAfter-c.after).Abs() > 2*time.Second {
			t.Errorf("%s: trouble %+v", c.kind, tr)
		}
		if s := call(); s != 200 {
			t.Fatalf("%s: the second call answered %d", c.kind, s)
		}
		if tr, ok := p.Trouble(); ok {
			t.Errorf("%s: a success left trouble %+v", c.kind, tr)
		}
		p.Close()
		api.Close()
	}
}

func TestTroubleOfHeaders(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	for _, c := range []struct {
		status int
		h      http.Header
		want   Trouble
	}{
		{200, h("retry-after", "5"), Trouble{}},
		{500, h(), Trouble{}},
		{429, h("x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s"), Trouble{Kind: agentout.RateLimited, Status: 429, RetryAfter: 6 * time.Minute}},
		{503, h("retry-after", now.Add(90*time.Second).UTC().Format(http.TimeFormat)), Trouble{Kind: agentout.Overloaded, Status: 503, RetryAfter: 90 * time.Second}},
		{429, h("retry-after", "NaN"), Trouble{Kind: agentout.RateLimited, Status: 429}},
		{429, h("retry-after", "1e300"), Trouble{Kind: agentout.RateLimited, Status: 429, RetryAfter: maxWait}},
		{403, h(), Trouble{Kind: agentout.AuthFailed, Status: 403}},
		// A reset years ahead is not believed; the window still is.
		{429, h("anthropic-ratelimit-unified-status", "rejected", "anthropic-ratelimit-unified-reset", "99999999999"), Trouble{Kind: agentout.UsageWindow, Status: 429}},
		{429, h("anthropic-ratelimit-unified-status", "rejected", "anthropic-ratelimit-unified-reset", "1800003600"),
			Trouble{Kind: agentout.UsageWindow, Status: 429, Reset: time.Unix(1800003600, 0)}},
	} {
		got := troubleOf(c.status, c.h, now)
		got.At = time.Time{}
		if got != c.want {
			t.Errorf("%d %v: %+v, want %+v", c.status, c.h, got, c.want)
		}
	}
}
