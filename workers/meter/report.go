package meter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"sort"
)

// maxReportLine bounds one line of an agent's output read for its usage.
const maxReportLine = 4 << 20

// Reported is the usage an agent printed or wrote of itself: Claude
// Code's JSON result (`total_cost_usd`, `usage`, `modelUsage`; qwen-code's
// stream-json result is the same shape), Codex's JSON events
// (`turn.completed` and `token_count`), Gemini CLI's stream-json result
// (`stats`), opencode's JSON events (each `step_finish` with its step's
// `tokens` and `cost`), and the JSON lines of
// $FLEET_USAGE ({"input_tokens":…,"output_tokens":…,"cost_usd":…,
// "model":…}). The agent wrote it, so it is never taken for metered usage,
// a line with a negative figure is refused, and no sum overflows; the
// caller bounds the whole (Usage.Bounded). ok is false when r reports
// nothing.
func Reported(r io.Reader) (u Usage, ok bool) {
	var rep Report
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxReportLine)
	for sc.Scan() {
		rep.Line(sc.Bytes())
	}
	return rep.Usage()
}

// Report reads an agent's output a line at a time, as it comes.
type Report struct {
	sum        Usage  // turns, $FLEET_USAGE lines
	result     *Usage // Claude Code's or Gemini CLI's result: the whole run
	codexTotal *Usage // Codex's running total: the last one counts
	ok         bool
	text       string // Claude Code's result text: its last message
	gemini     gemini // Gemini CLI's messages
}

// Text is the last message an agent's JSON output carried as its result
// (Claude Code's "result", Gemini CLI's last assistant message), where its
// ## Result section is.
func (rep *Report) Text() string { return rep.text }

// Line reads one line of output; a line that is no JSON is skipped.
func (rep *Report) Line(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' || len(line) > maxReportLine {
		return
	}
	var ev agentLine
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	for _, read := range lineReaders {
		if read(rep, &ev, line) {
			return
		}
	}
}

// lineReaders read the agents' usage lines, first match wins: each
// reports whether the line was its kind, and refuses a line with a
// negative figure whole, rather than reading it as less.
var lineReaders = []func(rep *Report, ev *agentLine, line []byte) bool{
	(*Report).readClaude, (*Report).readOpencode, (*Report).readGeminiResult, (*Report).readGeminiLine,
	(*Report).readCodexTurn, (*Report).readCodexTotal, (*Report).readPlain,
}

// add counts u toward the sum when it is sane.
func (rep *Report) add(u Usage) {
	if sane(u) {
		rep.sum.Add(u)
		rep.ok = true
	}
}

// readClaude reads Claude Code's result line.
func (rep *Report) readClaude(ev *agentLine, _ []byte) bool {
	if ev.Type != "result" || (ev.Usage == nil && ev.TotalCost == 0) {
		return false
	}
	if u := ev.claude(); sane(u) {
		rep.result, rep.text = &u, ev.Result
	}
	return true
}

// readOpencode reads opencode's step_finish lines.
func (rep *Report) readOpencode(ev *agentLine, _ []byte) bool {
	if ev.Type != "step_finish" || ev.Part == nil || ev.Part.Tokens == nil {
		return false
	}
	rep.add(ev.Part.opencode())
	return true
}

// readGeminiResult reads Gemini CLI's result line.
func (rep *Report) readGeminiResult(ev *agentLine, _ []byte) bool {
	if ev.Type != "result" || ev.Stats == nil {
		return false
	}
	rep.geminiResult(ev.Stats)
	return true
}

// readGeminiLine follows Gemini CLI's messages and tool calls.
func (rep *Report) readGeminiLine(ev *agentLine, line []byte) bool {
	if ev.Type != "message" && ev.Type != "tool_use" {
		return false
	}
	rep.gemini.line(ev.Type, line)
	return true
}

// readCodexTurn reads Codex's turn.completed lines.
func (rep *Report) readCodexTurn(ev *agentLine, _ []byte) bool {
	if ev.Type != "turn.completed" || ev.Usage == nil {
		return false
	}
	rep.add(ev.Usage.usage())
	return true
}

// readCodexTotal reads Codex's running token_count total.
func (rep *Report) readCodexTotal(ev *agentLine, _ []byte) bool {
	if ev.Msg == nil || ev.Msg.Type != "token_count" || ev.Msg.Info == nil || ev.Msg.Info.Total == nil {
		return false
	}
	if t := ev.Msg.Info.Total.usage(); sane(t) {
		rep.codexTotal = &t
	}
	return true
}

// readPlain reads a plain usage line ({"input_tokens": …}), as an agent
// writes to $FLEET_USAGE.
func (rep *Report) readPlain(ev *agentLine, _ []byte) bool {
	if ev.Type != "" || ev.Usage != nil || ev.Msg != nil || (ev.InputTokens == 0 && ev.OutputTokens == 0 && ev.CostUSD == 0) {
		return false
	}
	rep.add(Usage{Input: ev.InputTokens, Output: ev.OutputTokens, Cached: ev.CachedTokens, CostUSD: ev.CostUSD, Model: ev.Model})
	return true
}

// sane reports whether every figure of u is a number of at least 0 (JSON
// has no NaN or infinity, but a sum can reach one).
func sane(u Usage) bool {
	return u.Input >= 0 && u.Output >= 0 && u.Cached >= 0 && u.CacheWrite >= 0 &&
		u.CostUSD >= 0 && !math.IsInf(u.CostUSD, 0) && !math.IsNaN(u.CostUSD)
}

// Usage is what the lines so far report, and whether they report any.
func (rep *Report) Usage() (Usage, bool) {
	u, ok := rep.sum, rep.ok
	for _, whole := range []*Usage{rep.result, rep.codexTotal} {
		if whole != nil {
			u.Add(*whole)
			ok = true
		}
	}
	return clean(u), ok
}

// agentLine is one line of any agent's JSON output this package reads.
type agentLine struct {
	Type      string                `json:"type"`
	Usage     *wireCodex            `json:"usage"`
	TotalCost float64               `json:"total_cost_usd"`
	Result    string                `json:"result"`
	Stats     json.RawMessage       `json:"stats"` // Gemini CLI's, read in gemini.go
	ModelUse  map[string]modelUsage `json:"modelUsage"`
	Msg       *struct {
		Type string `json:"type"`
		Info *struct {
			Total *wireCodex `json:"total_token_usage"`
		} `json:"info"`
	} `json:"msg"`
	Part *opencodeStep `json:"part"`
	// $FLEET_USAGE's own shape.
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	Model        string  `json:"model"`
}

// wireCodex is wire plus Codex's name for cached input.
type wireCodex struct {
	wire
	CachedInput int64 `json:"cached_input_tokens"`
}

func (w wireCodex) usage() Usage {
	u := w.wire.usage()
	u.Cached = max(u.Cached, w.CachedInput)
	return u
}

// opencodeStep is the part of an opencode step_finish event: the step's
// tokens, the cache's apart from its input and the reasoning's from its
// output, and what it cost.
type opencodeStep struct {
	Tokens *struct {
		Input     int64 `json:"input"`
		Output    int64 `json:"output"`
		Reasoning int64 `json:"reasoning"`
		Cache     struct {
			Read  int64 `json:"read"`
			Write int64 `json:"write"`
		} `json:"cache"`
	} `json:"tokens"`
	Cost float64 `json:"cost"`
}

func (p opencodeStep) opencode() Usage {
	t := p.Tokens
	return Usage{Input: t.Input + t.Cache.Read + t.Cache.Write, Output: t.Output + t.Reasoning,
		Cached: t.Cache.Read, CacheWrite: t.Cache.Write, CostUSD: p.Cost}
}

type modelUsage struct {
	CostUSD float64 `json:"costUSD"`
}

// claude is a Claude Code result: its usage, its cost, and the model that
// cost the most.
func (ev agentLine) claude() Usage {
	var u Usage
	if ev.Usage != nil {
		u = ev.Usage.usage()
	}
	u.CostUSD = ev.TotalCost
	names := make([]string, 0, len(ev.ModelUse))
	for n := range ev.ModelUse {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := ev.ModelUse[names[i]].CostUSD, ev.ModelUse[names[j]].CostUSD
		return a > b || (a == b && names[i] < names[j])
	})
	if len(names) > 0 {
		u.Model = names[0]
	}
	return u
}

// clean keeps what an agent wrote from making any figure negative or not a
// number.
func clean(u Usage) Usage {
	u.Input, u.Output = max(u.Input, 0), max(u.Output, 0)
	u.Cached = min(max(u.Cached, 0), u.Input)
	u.CacheWrite = max(u.CacheWrite, 0)
	if math.IsNaN(u.CostUSD) || math.IsInf(u.CostUSD, 0) || u.CostUSD < 0 {
		u.CostUSD = 0
	}
	return u
}
