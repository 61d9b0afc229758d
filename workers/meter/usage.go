// Package meter counts what a run's model calls spend without trusting the
// agent: a loopback proxy the driver puts between the agent and its
// endpoint's base_url forwards every request unchanged, streams every
// response through as it arrives, and reads the token counts each response
// reports (JSON bodies and server-sent events, OpenAI's and Anthropic's
// shapes). It also reads what an agent reports of itself (Claude Code's and
// Codex's JSON output, lines appended to $FLEET_USAGE), marked as reported,
// not metered. Requests and responses are never stored, only counts.
package meter

import (
	"encoding/json"
	"math"
)

// Usage is what one or more model calls spent. Input counts every input
// token, cached ones included; Cached is the part read from the provider's
// cache, CacheWrite the part written to it.
type Usage struct {
	Input      int64   `json:"input_tokens"`
	Output     int64   `json:"output_tokens"`
	Cached     int64   `json:"cached_tokens,omitempty"`
	CacheWrite int64   `json:"cache_write_tokens,omitempty"`
	CostUSD    float64 `json:"cost_usd,omitempty"` // what the agent reported it cost; 0 when it did not
	Model      string  `json:"model,omitempty"`
	Calls      int     `json:"calls,omitempty"`
}

// Tokens is every token the usage counts, in and out.
func (u Usage) Tokens() int64 { return u.Input + u.Output }

// Add adds o to u; the model is the latest one named. A sum that would
// overflow stays at the largest figure instead of wrapping round to a
// negative one.
func (u *Usage) Add(o Usage) {
	u.Input = addTokens(u.Input, o.Input)
	u.Output = addTokens(u.Output, o.Output)
	u.Cached = addTokens(u.Cached, o.Cached)
	u.CacheWrite = addTokens(u.CacheWrite, o.CacheWrite)
	u.CostUSD = min(u.CostUSD+o.CostUSD, math.MaxFloat64)
	u.Calls += o.Calls
	if o.Model != "" {
		u.Model = o.Model
	}
}

func addTokens(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Bounded is u held to at most maxTokens tokens, in and out together
// (output first), and a reported cost of at most maxUSD: what one run's
// report can count for, whatever the agent wrote.
func (u Usage) Bounded(maxTokens int64, maxUSD float64) Usage {
	u.Output = min(u.Output, maxTokens)
	u.Input = min(u.Input, maxTokens-u.Output)
	u.Cached = min(u.Cached, u.Input)
	u.CacheWrite = min(u.CacheWrite, u.Input)
	u.CostUSD = min(u.CostUSD, maxUSD)
	return u
}

// wire is every usage field the providers' responses carry, under any of
// their names.
type wire struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheRead        int64 `json:"cache_read_input_tokens"`
	CacheCreation    int64 `json:"cache_creation_input_tokens"`
	PromptDetails    *struct {
		Cached int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	InputDetails *struct {
		Cached int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

// usage is w in fleetwatch's terms. Anthropic's input_tokens leave out the
// cache's; OpenAI's prompt_tokens and input_tokens hold them.
func (w wire) usage() Usage {
	u := Usage{Output: max(w.CompletionTokens, w.OutputTokens)}
	switch {
	case w.PromptTokens > 0:
		u.Input = w.PromptTokens
	case w.CacheRead > 0 || w.CacheCreation > 0:
		u.Input = w.InputTokens + w.CacheRead + w.CacheCreation
	default:
		u.Input = w.InputTokens
	}
	u.Cached, u.CacheWrite = w.CacheRead, w.CacheCreation
	if w.PromptDetails != nil {
		u.Cached = max(u.Cached, w.PromptDetails.Cached)
	}
	if w.InputDetails != nil {
		u.Cached = max(u.Cached, w.InputDetails.Cached)
	}
	return u
}

// carrier is a response body or one streamed event: the usage sits at its
// top (chat completions, messages, a message_delta event), in its response
// (the responses API's response.completed) or in its message (Anthropic's
// message_start).
type carrier struct {
	Model    string `json:"model"`
	Usage    *wire  `json:"usage"`
	Response *struct {
		Model string `json:"model"`
		Usage *wire  `json:"usage"`
	} `json:"response"`
	Message *struct {
		Model string `json:"model"`
		Usage *wire  `json:"usage"`
	} `json:"message"`
}

// fromJSON is the usage one JSON object reports, and whether it reports
// any.
func fromJSON(data []byte) (Usage, bool) {
	var c carrier
	if json.Unmarshal(data, &c) != nil {
		return Usage{}, false
	}
	model, w := c.Model, c.Usage
	if c.Response != nil && c.Response.Usage != nil {
		model, w = c.Response.Model, c.Response.Usage
	}
	if c.Message != nil && c.Message.Usage != nil {
		model, w = c.Message.Model, c.Message.Usage
	}
	if w == nil {
		return Usage{Model: model}, false
	}
	u := w.usage()
	u.Model = model
	return u, true
}

// merge folds one event's usage into a response's so far. Streams report
// running totals (Anthropic's message_delta) or one final count, so each
// field is the largest seen, never a sum.
func merge(into *Usage, u Usage) {
	into.Input = max(into.Input, u.Input)
	into.Output = max(into.Output, u.Output)
	into.Cached = max(into.Cached, u.Cached)
	into.CacheWrite = max(into.CacheWrite, u.CacheWrite)
	if u.Model != "" {
		into.Model = u.Model
	}
}

// Price is what a model costs, in USD per million tokens.
type Price struct {
	Input, Output, CacheRead float64
}

// Cost is what u cost at p: cached input at the cache's price (the input
// price when none is set). A cost the agent reported wins, since it knows
// its plan's discounts.
func (u Usage) Cost(p Price) float64 {
	if u.CostUSD > 0 {
		return u.CostUSD
	}
	cacheRead := p.CacheRead
	if cacheRead == 0 {
		cacheRead = p.Input
	}
	fresh := max(u.Input-u.Cached, 0)
	c := (float64(fresh)*p.Input + float64(u.Cached)*cacheRead + float64(u.Output)*p.Output) / 1e6
	return math.Round(c*1e6) / 1e6
}
