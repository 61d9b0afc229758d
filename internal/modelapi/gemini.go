package modelapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// geminiAPI is Google's Gemini API as Gemini CLI calls it with
// GOOGLE_GEMINI_BASE_URL: POST {base}/v1beta/models/{model}:generateContent,
// or :streamGenerateContent?alt=sse for server-sent events, each event a
// whole GenerateContentResponse. Token counts (:countTokens) are not
// served: no model answers them, and the metering proxy would count them
// as a call.
type geminiAPI struct{}

func (geminiAPI) name() string { return "gemini" }

func (geminiAPI) match(r *http.Request) bool {
	_, method, ok := geminiRoute(r.URL.Path)
	return ok && (method == "generateContent" || method == "streamGenerateContent")
}

// geminiRoute splits a path ending in models/{model}:{method}.
func geminiRoute(path string) (model, method string, ok bool) {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return "", "", false
	}
	return strings.Cut(path[i+len("/models/"):], ":")
}

type geminiRequest struct {
	Contents []struct {
		Role string `json:"role"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

func (geminiAPI) read(r *http.Request, body []byte) (Request, error) {
	var m geminiRequest
	if err := json.Unmarshal(body, &m); err != nil {
		return Request{}, fmt.Errorf("a generateContent request that is not JSON: %v", err)
	}
	model, method, _ := geminiRoute(r.URL.Path)
	req := Request{Model: model, Stream: method == "streamGenerateContent"}
	var names []string
	for _, t := range m.Tools {
		for _, f := range t.FunctionDeclarations {
			names = append(names, f.Name)
		}
	}
	req.Tool = ShellTool(names)
	for _, c := range m.Contents {
		if c.Role == "model" {
			req.Results++
		}
	}
	return req, nil
}

func (geminiAPI) answer(w http.ResponseWriter, a Answer) {
	part := map[string]any{"text": a.Text}
	if a.Tool != "" {
		part = map[string]any{"functionCall": map[string]any{"name": a.Tool, "args": a.Args}}
	}
	usage := map[string]any{"promptTokenCount": a.Input, "candidatesTokenCount": a.Output, "totalTokenCount": a.Input + a.Output}
	whole := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": usage, "modelVersion": a.Model, "responseId": fmt.Sprintf("resp_%d", a.Seq),
	}
	if !a.Stream {
		writeJSON(w, http.StatusOK, whole)
		return
	}
	// As the API streams: the content first with the prompt's count, then
	// the finish with the whole usage.
	e := newEvents(w, a, 2)
	e.send("", map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": a.Input, "totalTokenCount": a.Input},
		"modelVersion":  a.Model, "responseId": whole["responseId"],
	})
	whole["candidates"] = []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": ""}}}, "finishReason": "STOP", "index": 0}}
	e.send("", whole)
}

// fault answers in Google's error shape (google.rpc.Status), with the
// details Gemini CLI reads: RetryInfo's retryDelay and, for a spent daily
// quota, a QuotaFailure whose quota id says PerDay.
func (geminiAPI) fault(w http.ResponseWriter, f Fault) {
	code, status, msg := http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."
	var details []any
	switch f.Kind {
	case RateLimited:
		details = append(details, retryInfo(f.RetryAfter))
	case UsageWindow:
		wait := time.Until(f.Reset)
		msg = fmt.Sprintf("You exceeded your current quota, please check your plan and billing details. Please retry in %s.", googleDuration(wait))
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{
			"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
			"quotaId":     "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
		}}}, retryInfo(wait))
	case Overloaded:
		code, status, msg = http.StatusServiceUnavailable, "UNAVAILABLE", "The model is overloaded. Please try again later."
	case AuthFailed:
		code, status, msg = http.StatusUnauthorized, "UNAUTHENTICATED", "API key not valid. Please pass a valid API key."
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"})
	}
	body := map[string]any{"code": code, "message": msg, "status": status}
	if details != nil {
		body["details"] = details
	}
	writeJSON(w, code, map[string]any{"error": body})
}

// retryInfo is google.rpc.RetryInfo: retry after d.
func retryInfo(d time.Duration) map[string]any {
	return map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": googleDuration(d)}
}

// googleDuration is d as protobuf's JSON writes a Duration, whole seconds.
func googleDuration(d time.Duration) string {
	return fmt.Sprintf("%ds", max(int64((d+time.Second-1)/time.Second), 0))
}
