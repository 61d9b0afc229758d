package meter

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/agentout"
)

// Trouble is the endpoint trouble the proxy saw in an upstream answer:
// a rate limit, an overload, a refused key or a spent usage window, with
// when the upstream said to call again. It is the API's own word, read
// from the answer's status and headers, which the agent cannot forge.
type Trouble struct {
	Kind   agentout.Trouble
	Status int
	// RetryAfter is the answer's retry-after (or OpenAI's longest
	// x-ratelimit-reset-*), 0 when it gave none; Reset is when a spent
	// window opens again (Anthropic's unified reset), zero when unsaid.
	RetryAfter time.Duration
	Reset      time.Time
	At         time.Time // when the answer came
}

// maxWait bounds a wait an upstream asks for: a header is read, never
// trusted to park an endpoint for years.
const maxWait = 8 * 24 * time.Hour

// Trouble is the trouble of the last answer that had any, cleared by a
// later answer that was a success; ok is false when there is none.
func (p *Proxy) Trouble() (Trouble, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.trouble, p.trouble.Kind != agentout.NoTrouble
}

// see notes resp's trouble, or clears it on a model's success (a free
// call's success, a model list, says nothing of the window).
func (p *Proxy) see(resp *http.Response, free bool) {
	t := troubleOf(resp.StatusCode, resp.Header, time.Now())
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if t.Kind == agentout.NoTrouble && (!ok || free) {
		return
	}
	p.mu.Lock()
	p.trouble = t
	p.mu.Unlock()
}

// troubleOf is the trouble an answer's status and headers say, at now.
func troubleOf(status int, h http.Header, now time.Time) Trouble {
	t := Trouble{Kind: agentout.ForStatus(status), Status: status, At: now}
	if t.Kind == agentout.NoTrouble {
		return Trouble{}
	}
	t.RetryAfter = retryAfter(h.Get("retry-after"), now)
	if t.RetryAfter == 0 {
		for _, k := range []string{"x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"} {
			if d, err := time.ParseDuration(strings.TrimSpace(h.Get(k))); err == nil && d > 0 {
				t.RetryAfter = max(t.RetryAfter, min(d, maxWait))
			}
		}
	}
	// A subscription's spent window: Anthropic's unified limit rejected,
	// with the Unix second it resets at.
	if strings.EqualFold(h.Get("anthropic-ratelimit-unified-status"), "rejected") && status == http.StatusTooManyRequests {
		t.Kind = agentout.UsageWindow
		if n, err := strconv.ParseInt(strings.TrimSpace(h.Get("anthropic-ratelimit-unified-reset")), 10, 64); err == nil &&
			n > now.Unix() && n < now.Add(maxWait).Unix() {
			t.Reset = time.Unix(n, 0)
		}
	}
	return t
}

// retryAfter reads a retry-after header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		switch {
		case !(n > 0): // also NaN
			return 0
		case n > maxWait.Seconds():
			return maxWait
		}
		return time.Duration(n * float64(time.Second))
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return min(at.Sub(now), maxWait)
	}
	return 0
}
