// Package meter counts what a run's model calls spend without trusting the
// agent: a loopback proxy the driver puts between the agent and its
// endpoint's base_url forwards every request unchanged (but a streamed
// chat completion, which it has ask for its usage), streams every response
// through as it arrives, and reads the token counts each response reports
// (JSON bodies and server-sent events, OpenAI's, Anthropic's and Gemini's
// shapes). A call whose answer reports no usage it can read is counted all
// the same, estimated from its bytes (Estimate). It also reads what an
// agent reports of itself (Claude Code's, Codex's and Gemini CLI's JSON
// output, lines appended to $FLEET_USAGE), marked as reported, not
// metered. Requests and responses are never stored, only counts.
package meter

import (
	"bytes"
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
	// Estimated are the calls whose answer reported no usage that could
	// be read, counted from their bytes instead (Estimate).
	Estimated int `json:"estimated_calls,omitempty"`
}

// MaxCallTokens is the most one metered call counts for, whatever its
// answer says: no model reads or writes ten million tokens in one call.
const MaxCallTokens = 10_000_000

// BytesPerToken is how a call's tokens are guessed from its bytes when its
// answer reports none that can be read: about four bytes a token, as
// model.BytesPerToken guesses a plan's.
const BytesPerToken = 4

// Estimate is what a call whose usage cannot be read counts for: its
// request's bytes as input and its answer's as output, a token for every
// BytesPerToken bytes begun, at most MaxCallTokens in all.
func Estimate(requestBytes, answerBytes int64) Usage {
	tokens := func(n int64) int64 { return (max(n, 0) + BytesPerToken - 1) / BytesPerToken }
	u := Usage{Input: tokens(requestBytes), Output: tokens(answerBytes), Calls: 1, Estimated: 1}
	return u.Bounded(MaxCallTokens, 0)
}

// Tokens is every token the usage counts, in and out.
func (u Usage) Tokens() int64 { return u.Input + u.Output }

// Add adds o to u; the model is the latest one named. A figure below zero
// adds nothing, and a sum that would overflow stays at the largest figure
// instead of wrapping round to a negative one.
func (u *Usage) Add(o Usage) {
	u.Input = addTokens(u.Input, o.Input)
	u.Output = addTokens(u.Output, o.Output)
	u.Cached = addTokens(u.Cached, o.Cached)
	u.CacheWrite = addTokens(u.CacheWrite, o.CacheWrite)
	u.CostUSD = min(u.CostUSD+max(o.CostUSD, 0), math.MaxFloat64)
	u.Calls += max(o.Calls, 0)
	u.Estimated += max(o.Estimated, 0)
	if o.Model != "" {
		u.Model = o.Model
	}
}

func addTokens(a, b int64) int64 {
	if b <= 0 {
		return a
	}
	if a > math.MaxInt64-b {
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
// (the responses API's response.completed), in its message (Anthropic's
// message_start) or in its usageMetadata (Gemini's).
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
	Gemini       *geminiWire `json:"usageMetadata"`
	ModelVersion string      `json:"modelVersion"`
}

// reading is what one JSON object says of a call's usage.
type reading int

const (
	noUsage  reading = iota // no usage at all
	badUsage                // a usage with a figure below zero: none to trust
	gotUsage
)

// sane reports whether every figure w carries is at least 0: a usage that
// says otherwise is not read, never taken to lower the count.
func (w wire) sane() bool {
	ok := w.PromptTokens >= 0 && w.CompletionTokens >= 0 && w.InputTokens >= 0 && w.OutputTokens >= 0 &&
		w.CacheRead >= 0 && w.CacheCreation >= 0
	if w.PromptDetails != nil {
		ok = ok && w.PromptDetails.Cached >= 0
	}
	if w.InputDetails != nil {
		ok = ok && w.InputDetails.Cached >= 0
	}
	return ok
}

// fromJSON is the usage one JSON object reports, and what it says of it.
func fromJSON(data []byte) (Usage, reading) {
	var c carrier
	if json.Unmarshal(data, &c) != nil {
		return Usage{}, noUsage
	}
	model, w := c.Model, c.Usage
	if c.Response != nil && c.Response.Usage != nil {
		model, w = c.Response.Model, c.Response.Usage
	}
	if c.Message != nil && c.Message.Usage != nil {
		model, w = c.Message.Model, c.Message.Usage
	}
	if w == nil && c.Gemini != nil {
		return c.Gemini.read(c.ModelVersion)
	}
	return fromWire(w, model)
}

func fromWire(w *wire, model string) (Usage, reading) {
	switch {
	case w == nil:
		return Usage{Model: model}, noUsage
	case !w.sane():
		return Usage{Model: model}, badUsage
	}
	u := w.usage()
	u.Model = model
	return u, gotUsage
}

// usageKey is how a usage object begins in JSON text. Inside a string its
// quotes are escaped, so text the model wrote never reads as one.
var usageKey = []byte(`"usage"`)

// maxScans bounds the "usage" keys scanUsage tries, each decoded to the
// window's end at worst.
const maxScans = 8

// scanUsage is the last usage object in b, a window on a JSON text too big
// to hold (its first or last KiB): the object after the last "usage" key
// that reads as one, of the last maxScans. Every provider puts a body's
// usage near its end.
func scanUsage(b []byte) (Usage, reading) {
	for end, n := len(b), 0; end > 0 && n < maxScans; n++ {
		i := bytes.LastIndex(b[:end], usageKey)
		if i < 0 {
			break
		}
		end = i
		rest := bytes.TrimLeft(b[i+len(usageKey):], " \t\r\n")
		rest, ok := bytes.CutPrefix(rest, []byte(":"))
		if !ok {
			continue
		}
		var w *wire
		if json.NewDecoder(bytes.NewReader(rest)).Decode(&w) != nil || w == nil {
			continue
		}
		return fromWire(w, "")
	}
	return Usage{}, noUsage
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
