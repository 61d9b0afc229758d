package meter

import "encoding/json"

// Gemini's API reports usage as usageMetadata, in a body and in each
// streamed event (running totals), and Gemini CLI's stream-json output
// reports the run's in its result event's stats.

// geminiWire is Gemini's usageMetadata. promptTokenCount holds the cached
// part (cachedContentTokenCount); thinking (thoughtsTokenCount) is billed
// as output, a tool's own prompt (toolUsePromptTokenCount) as input.
type geminiWire struct {
	Prompt     int64 `json:"promptTokenCount"`
	Candidates int64 `json:"candidatesTokenCount"`
	Thoughts   int64 `json:"thoughtsTokenCount"`
	ToolPrompt int64 `json:"toolUsePromptTokenCount"`
	Cached     int64 `json:"cachedContentTokenCount"`
}

// read is what w reports, and what it says of it.
func (w geminiWire) read(model string) (Usage, reading) {
	if w.Prompt < 0 || w.Candidates < 0 || w.Thoughts < 0 || w.ToolPrompt < 0 || w.Cached < 0 {
		return Usage{Model: model}, badUsage
	}
	u := Usage{Input: addTokens(w.Prompt, w.ToolPrompt), Output: addTokens(w.Candidates, w.Thoughts), Cached: w.Cached, Model: model}
	return u, gotUsage
}

// geminiStats is Gemini CLI's stream-json result stats: the run's tokens.
type geminiStats struct {
	Input  int64 `json:"input_tokens"`
	Output int64 `json:"output_tokens"`
	Cached int64 `json:"cached"`
}

// usage is s in fleetwatch's terms; Gemini CLI's input_tokens hold the
// cached ones.
func (s geminiStats) usage() Usage { return Usage{Input: s.Input, Output: s.Output, Cached: s.Cached} }

// maxGeminiText bounds the last assistant message kept of Gemini CLI's
// output.
const maxGeminiText = 64 << 10

// gemini is what Report keeps of Gemini CLI's stream-json messages: its
// last assistant message, which comes in pieces (delta) and ends at a
// tool call.
type gemini struct {
	text  []byte
	ended bool // a tool call came after it: the next piece starts anew
}

// line reads one message or tool_use event.
func (g *gemini) line(kind string, line []byte) {
	if kind == "tool_use" {
		g.ended = true
		return
	}
	var m struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Delta   bool   `json:"delta"`
	}
	if json.Unmarshal(line, &m) != nil || m.Role != "assistant" {
		return
	}
	if g.ended || !m.Delta {
		g.text, g.ended = g.text[:0], false
	}
	g.text = append(g.text, m.Content...)
	if len(g.text) > maxGeminiText {
		g.text = append(g.text[:0], g.text[len(g.text)-maxGeminiText:]...)
	}
}

// geminiResult reads Gemini CLI's result event's stats: the whole run.
func (rep *Report) geminiResult(raw json.RawMessage) {
	var s geminiStats
	if json.Unmarshal(raw, &s) != nil {
		return
	}
	if u := s.usage(); sane(u) {
		rep.result, rep.text = &u, string(rep.gemini.text)
	}
}
