package meter

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// scripted is an upstream that answers every request with answer(body);
// it keeps the last request body it saw.
func scripted(t *testing.T, answer func(w http.ResponseWriter, body []byte)) (*Proxy, func() string) {
	var mu sync.Mutex
	var last []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = body
		mu.Unlock()
		answer(w, body)
	}))
	t.Cleanup(up.Close)
	p, err := Start(up.URL+"/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, func() string {
		mu.Lock()
		defer mu.Unlock()
		return string(last)
	}
}

func jsonAnswer(text string) func(http.ResponseWriter, []byte) {
	return func(w http.ResponseWriter, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, text)
	}
}

// A figure below zero is no usage to trust: the call is estimated from
// its bytes, never taken off the total; one past MaxCallTokens counts for
// MaxCallTokens.
func TestProxyNeverCountsBelowZeroOrPastTheCap(t *testing.T) {
	cases := []struct {
		answer string
		check  func(Usage) bool
	}{
		{`{"model":"m","usage":{"input_tokens":-200000,"output_tokens":-15}}`, func(u Usage) bool { return u.Estimated == 1 && u.Input > 0 && u.Output > 0 }},
		{`{"model":"m","usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":-900}}`, func(u Usage) bool { return u.Estimated == 1 && u.Tokens() > 0 }},
		{`{"model":"m","usage":{"prompt_tokens":9000000000000000000,"completion_tokens":9000000000000000000}}`, func(u Usage) bool { return u.Estimated == 0 && u.Tokens() == MaxCallTokens }},
	}
	for _, c := range cases {
		p, _ := scripted(t, jsonAnswer(c.answer))
		post(t, p.URL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		if u := p.Usage(); u.Calls != 1 || !c.check(u) || u.Input < 0 || u.Output < 0 {
			t.Errorf("%s: %+v", c.answer, u)
		}
	}
}

// A streamed chat completion that does not ask for its usage is made to:
// the upstream sees stream_options.include_usage true, the rest of the
// request as it was.
func TestProxyAsksAStreamForItsUsage(t *testing.T) {
	p, seen := scripted(t, func(w http.ResponseWriter, body []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"hi\"}}],\"usage\":null}\n\n")
		if bytes.Contains(body, []byte(`"include_usage":true`)) {
			fmt.Fprint(w, "data: {\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":300,\"completion_tokens\":20}}\n\n")
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	for _, body := range []string{
		`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","stream":true,"stream_options":{"include_usage":false,"x":1}}`,
	} {
		before := p.Usage()
		post(t, p.URL()+"/chat/completions", body)
		got := seen()
		if !strings.Contains(got, `"stream_options":{"include_usage":true`) || !strings.Contains(got, `"model":"m"`) {
			t.Errorf("the upstream saw %s", got)
		}
		if u := p.Usage(); u.Input-before.Input != 300 || u.Output-before.Output != 20 || u.Estimated != 0 {
			t.Errorf("%s: %+v", body, u)
		}
	}
	// A request that is not a stream, or not JSON, goes on as it was.
	for _, body := range []string{`{"model":"m","stream":false}`, `not json`, `{"stream":true,"stream_options":"x"}`} {
		post(t, p.URL()+"/chat/completions", body)
		if got := seen(); got != body {
			t.Errorf("the upstream saw %q, want %q", got, body)
		}
	}
	// Not JSON and no usage: the stream is estimated, and says so.
	if u := p.Usage(); u.Calls != 5 || u.Estimated != 3 {
		t.Errorf("usage %+v", u)
	}
}

// An answer too big to hold is read at its end: a JSON body over
// maxJSONBody, and an event line over maxEventLine.
func TestProxyReadsTheTailOfAnAnswerTooBigToHold(t *testing.T) {
	big := strings.Repeat("a", maxJSONBody+1<<20)
	p, _ := scripted(t, jsonAnswer(`{"model":"m","choices":[{"message":{"content":"`+big+`"}}],"usage":{"prompt_tokens":1234,"completion_tokens":5678}}`))
	post(t, p.URL()+"/chat/completions", `{}`)
	if u := p.Usage(); u.Input != 1234 || u.Output != 5678 || u.Estimated != 0 {
		t.Errorf("a body of %d bytes: %+v", len(big), u)
	}

	line := strings.Repeat("b", maxEventLine+10)
	p, _ = scripted(t, func(w http.ResponseWriter, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"type\":\"response.completed\",\"response\":{\"model\":\"m\",\"output\":\"%s\",\"usage\":{\"input_tokens\":500,\"output_tokens\":60}}}", line)
	})
	post(t, p.URL()+"/responses", `{"stream":true}`)
	if u := p.Usage(); u.Input != 500 || u.Output != 60 || u.Estimated != 0 {
		t.Errorf("an event line of %d bytes with no newline: %+v", len(line), u)
	}
}

// An answer whose usage cannot be read — an unknown shape, no usage, a
// usage of no tokens, text that is no JSON — is counted from its bytes
// and marked estimated.
func TestProxyEstimatesWhatItCannotRead(t *testing.T) {
	for _, answer := range []string{
		`{"text":"hello","tokens":{"in":50,"out":7}}`,
		`{"model":"m","usage":{}}`,
		`{"model":"m","usage":{"prompt_tokens":0,"completion_tokens":0}}`,
		`<html>hello</html>`,
		``,
	} {
		p, _ := scripted(t, jsonAnswer(answer))
		req := strings.Repeat("x", 400)
		post(t, p.URL()+"/generate", req)
		want := Usage{Input: 100, Output: (int64(len(answer)) + 3) / 4, Calls: 1, Estimated: 1}
		if answer != `<html>hello</html>` && answer != "" && strings.Contains(answer, `"model"`) {
			want.Model = "m"
		}
		if u := p.Usage(); u != want {
			t.Errorf("%q: %+v, want %+v", answer, u, want)
		}
	}
}

func TestEstimate(t *testing.T) {
	if u := Estimate(0, 1); u.Input != 0 || u.Output != 1 || u.Estimated != 1 || u.Calls != 1 {
		t.Errorf("%+v", u)
	}
	if u := Estimate(1<<40, 1<<40); u.Tokens() != MaxCallTokens {
		t.Errorf("a huge call: %+v", u)
	}
}

func TestAddIgnoresFiguresBelowZero(t *testing.T) {
	u := Usage{Input: 10, Output: 10}
	u.Add(Usage{Input: -5, Output: -100, Cached: -1, CostUSD: -2, Calls: -1})
	if u != (Usage{Input: 10, Output: 10}) {
		t.Errorf("%+v", u)
	}
}

func TestTailKeepsTheLastBytes(t *testing.T) {
	var tl tail
	var all bytes.Buffer
	for i := range 5000 {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, i%97)
		tl.write(p)
		all.Write(p)
	}
	got, want := tl.bytes(), all.Bytes()
	if len(got) < keptEnds || len(got) > 2*keptEnds || !bytes.HasSuffix(want, got) {
		t.Errorf("kept %d bytes, not the end of what was written", len(got))
	}
}

// A model list or a token count spends nothing: such a call is neither
// counted nor estimated, however its answer reads.
func TestFreeCallsAreNotEstimated(t *testing.T) {
	for _, c := range []struct {
		method, path string
		free         bool
	}{
		{"GET", "/v1/models", true},
		{"HEAD", "/v1/models", true},
		{"POST", "/v1/messages/count_tokens", true},
		{"POST", "/v1/messages", false},
		{"POST", "/v1/chat/completions", false},
	} {
		p, _ := scripted(t, jsonAnswer(`{"data":[{"id":"m"}],"input_tokens":12}`))
		r, err := http.NewRequest(c.method, p.URL()+strings.TrimPrefix(c.path, "/v1"), strings.NewReader(strings.Repeat("x", 400)))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if u := p.Usage(); (u == Usage{}) != c.free {
			t.Errorf("%s %s: counted %+v (free: %v)", c.method, c.path, u, c.free)
		}
	}
}
