package meter

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// modelServer is a stand-in model endpoint with the providers' shapes:
// OpenAI chat completions (JSON, and SSE with include_usage), the
// responses API's stream, and Anthropic's messages stream. release, when
// set, holds a stream after its first event until it is closed.
type modelServer struct {
	*httptest.Server
	hits    atomic.Int32
	release chan struct{}
}

func newModelServer(t testing.TB) *modelServer {
	s := &modelServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *modelServer) serve(w http.ResponseWriter, r *http.Request) {
	s.hits.Add(1)
	body, _ := io.ReadAll(r.Body)
	stream := strings.Contains(string(body), `"stream":true`)
	switch {
	case r.URL.Path == "/v1/chat/completions" && !stream:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","model":"qwen3-32b","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":1200,"completion_tokens":80,"total_tokens":1280,"prompt_tokens_details":{"cached_tokens":1024}}}`)
	case r.URL.Path == "/v1/chat/completions":
		s.events(w, []string{
			`{"id":"c2","model":"qwen3-32b","choices":[{"index":0,"delta":{"content":"h"}}],"usage":null}`,
			`{"id":"c2","model":"qwen3-32b","choices":[{"index":0,"delta":{"content":"i"}}],"usage":null}`,
			`{"id":"c2","model":"qwen3-32b","choices":[],"usage":{"prompt_tokens":300,"completion_tokens":20,"total_tokens":320}}`,
			`[DONE]`,
		})
	case r.URL.Path == "/v1/responses":
		s.events(w, []string{
			`{"type":"response.created","response":{"id":"r1","model":"gpt-5-mini","usage":null}}`,
			`{"type":"response.output_text.delta","delta":"hi"}`,
			`{"type":"response.completed","response":{"id":"r1","model":"gpt-5-mini","usage":{"input_tokens":500,"input_tokens_details":{"cached_tokens":100},"output_tokens":60,"total_tokens":560}}}`,
		})
	case r.URL.Path == "/v1/messages":
		s.events(w, []string{
			`{"type":"message_start","message":{"id":"m1","model":"claude-sonnet-4-5","usage":{"input_tokens":12,"cache_creation_input_tokens":400,"cache_read_input_tokens":3000,"output_tokens":1}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":95}}`,
			`{"type":"message_stop"}`,
		})
	default:
		http.NotFound(w, r)
	}
}

// events writes a server-sent event stream, flushing each event.
func (s *modelServer) events(w http.ResponseWriter, data []string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for i, d := range data {
		fmt.Fprintf(w, "event: x\ndata: %s\n\n", d)
		w.(http.Flusher).Flush()
		if i == 0 && s.release != nil {
			<-s.release
		}
	}
}

func post(t testing.TB, url, body string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %s: %s", url, resp.Status, data)
	}
	return string(data)
}

func TestProxyMetersEveryShape(t *testing.T) {
	up := newModelServer(t)
	var seen []Usage
	var mu sync.Mutex
	p, err := Start(up.URL+"/v1", func(u Usage) { mu.Lock(); seen = append(seen, u); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !strings.HasPrefix(p.URL(), "http://127.0.0.1:") || !strings.HasSuffix(p.URL(), "/v1") {
		t.Fatalf("URL %q", p.URL())
	}
	cases := []struct {
		path, body string
		want       Usage
	}{
		{"/chat/completions", `{"model":"m"}`, Usage{Input: 1200, Output: 80, Cached: 1024, Model: "qwen3-32b", Calls: 1}},
		{"/chat/completions", `{"stream":true,"stream_options":{"include_usage":true}}`, Usage{Input: 300, Output: 20, Model: "qwen3-32b", Calls: 1}},
		{"/responses", `{"stream":true}`, Usage{Input: 500, Output: 60, Cached: 100, Model: "gpt-5-mini", Calls: 1}},
		{"/messages", `{"stream":true}`, Usage{Input: 3412, Output: 95, Cached: 3000, CacheWrite: 400, Model: "claude-sonnet-4-5", Calls: 1}},
	}
	var total Usage
	for _, c := range cases {
		got := post(t, p.URL()+c.path, c.body)
		if c.path == "/chat/completions" && !strings.Contains(got, `"content":"hi"`) && !strings.Contains(got, `"content":"i"`) {
			t.Errorf("%s: body not forwarded whole: %q", c.path, got)
		}
		mu.Lock()
		last := seen[len(seen)-1]
		mu.Unlock()
		if last != c.want {
			t.Errorf("%s %s: usage %+v, want %+v", c.path, c.body, last, c.want)
		}
		total.Add(c.want)
	}
	if got := p.Usage(); got != total {
		t.Errorf("total %+v, want %+v", got, total)
	}
}

// A streamed event reaches the agent before the upstream has sent the
// rest: the proxy never waits for a whole response.
func TestProxyStreamsWithoutBuffering(t *testing.T) {
	up := newModelServer(t)
	up.release = make(chan struct{})
	p, err := Start(up.URL+"/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	resp, err := http.Post(p.URL()+"/messages", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		first <- line
	}()
	select {
	case line := <-first:
		if line != "event: x\n" {
			t.Errorf("first line %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first event did not arrive while the upstream held the rest: the proxy buffers")
	}
	close(up.release)
}

// A paused proxy holds new requests; Resume lets them through.
func TestProxyPauseHoldsRequests(t *testing.T) {
	up := newModelServer(t)
	p, err := Start(up.URL+"/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Pause()
	done := make(chan string, 1)
	go func() { done <- post(t, p.URL()+"/chat/completions", `{}`) }()
	select {
	case <-done:
		t.Fatal("a request went through a paused proxy")
	case <-time.After(300 * time.Millisecond):
	}
	if n := up.hits.Load(); n != 0 {
		t.Fatalf("upstream saw %d requests while paused", n)
	}
	p.Resume()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the held request never went on after Resume")
	}
	if u := p.Usage(); u.Calls != 1 || u.Input != 1200 {
		t.Errorf("usage after resume %+v", u)
	}
}

// 32 streams at once through one proxy: each is counted once.
func TestProxyConcurrentStreams(t *testing.T) {
	up := newModelServer(t)
	p, err := Start(up.URL+"/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() { post(t, p.URL()+"/messages", `{"stream":true}`) })
	}
	wg.Wait()
	if u := p.Usage(); u.Calls != 32 || u.Output != 32*95 || u.Input != 32*3412 {
		t.Errorf("32 streams: %+v", u)
	}
}

func TestStartRefusesABadBaseURL(t *testing.T) {
	for _, bad := range []string{"", "ftp://x", "127.0.0.1:8000", "http://"} {
		if _, err := Start(bad, nil); err == nil || !strings.Contains(err.Error(), "base_url") {
			t.Errorf("Start(%q): %v", bad, err)
		}
	}
}

func TestReportedByAgents(t *testing.T) {
	cases := []struct {
		file string
		want Usage
	}{
		{"claude-code.json", Usage{Input: 38 + 21877 + 301244, Output: 4120, Cached: 301244, CacheWrite: 21877, CostUSD: 0.4213, Model: "claude-sonnet-4-5-20250929"}},
		{"codex.jsonl", Usage{Input: 24763 + 26011, Output: 122 + 407, Cached: 24448 + 24832}},
		{"codex-legacy.jsonl", Usage{Input: 19502, Output: 905, Cached: 17024}},
	}
	for _, c := range cases {
		f, err := os.Open("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := Reported(f)
		f.Close()
		if !ok || got != c.want {
			t.Errorf("%s: %+v (%v), want %+v", c.file, got, ok, c.want)
		}
	}
}

func TestReportedUsageFileLines(t *testing.T) {
	text := `{"input_tokens":1000,"output_tokens":200,"cost_usd":0.01,"model":"local-7b"}
not json
{"input_tokens":-5000,"output_tokens":10,"cost_usd":-3}
{"input_tokens":500,"output_tokens":50,"cached_tokens":400}
`
	got, ok := Reported(strings.NewReader(text))
	// A line with a negative figure is refused whole: it never lowers the sum.
	want := Usage{Input: 1500, Output: 250, Cached: 400, CostUSD: 0.01, Model: "local-7b"}
	if !ok || got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, ok := Reported(strings.NewReader("plain text\n{\"type\":\"item.completed\"}\n")); ok {
		t.Error("output with no usage reported some")
	}
}

func TestCost(t *testing.T) {
	u := Usage{Input: 2_000_000, Cached: 1_000_000, Output: 500_000}
	if got := u.Cost(Price{Input: 3, Output: 15, CacheRead: 0.3}); got != 3+0.3+7.5 {
		t.Errorf("cost %v", got)
	}
	if got := u.Cost(Price{Input: 3, Output: 15}); got != 6+7.5 {
		t.Errorf("cost without a cache price %v", got)
	}
	u.CostUSD = 1.25
	if got := u.Cost(Price{Input: 3}); got != 1.25 {
		t.Errorf("a reported cost wins: %v", got)
	}
}

func TestReportKeepsClaudesResultText(t *testing.T) {
	var rep Report
	rep.Line([]byte(`{"type":"result","result":"Done.\n\n## Result\n\nsuccess","total_cost_usd":0.1,"usage":{"input_tokens":5,"output_tokens":1}}`))
	if rep.Text() != "Done.\n\n## Result\n\nsuccess" {
		t.Errorf("%q", rep.Text())
	}
}

// An agent cannot hold more than maxInFlight requests upstream at once:
// the rest wait their turn, and all are answered.
func TestProxyBoundsRequestsInFlight(t *testing.T) {
	var now, most atomic.Int32
	hold := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := now.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-hold
		now.Add(-1)
		fmt.Fprint(w, `{"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}))
	defer up.Close()
	p, err := Start(up.URL+"/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var wg sync.WaitGroup
	for range maxInFlight + 16 {
		wg.Go(func() { post(t, p.URL()+"/chat/completions", `{}`) })
	}
	for i := 0; most.Load() < maxInFlight && i < 500; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if n := most.Load(); n != maxInFlight {
		t.Errorf("%d requests upstream at once, want at most and at last %d", n, maxInFlight)
	}
	close(hold)
	wg.Wait()
	if u := p.Usage(); u.Calls != maxInFlight+16 {
		t.Errorf("%d calls answered, want %d", u.Calls, maxInFlight+16)
	}
}

// An agent that opens connections by the hundred holds at most maxConns of
// the driver's descriptors; the rest wait to be accepted.
func TestProxyBoundsConnections(t *testing.T) {
	up := newModelServer(t)
	p, err := Start(up.URL+"/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	addr := strings.TrimPrefix(strings.SplitN(p.URL(), "/v1", 2)[0], "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range maxConns + 10 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// A connection past the bound is not served: its request gets no
	// answer while the others stay open.
	last := conns[len(conns)-1]
	last.SetDeadline(time.Now().Add(300 * time.Millisecond))
	fmt.Fprint(last, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	if n, err := last.Read(make([]byte, 1)); err == nil || n > 0 {
		t.Error("a connection past maxConns was served")
	}
}

func TestReportedUsageNeverOverflowsAndIsBounded(t *testing.T) {
	line := `{"input_tokens":9000000000000000000,"output_tokens":9000000000000000000,"cost_usd":1e308}` + "\n"
	got, ok := Reported(strings.NewReader(line + line + line))
	if !ok || got.Input != math.MaxInt64 || got.Output != math.MaxInt64 || got.CostUSD != math.MaxFloat64 {
		t.Fatalf("sum %+v (%v): want the largest figures, never a wrap round", got, ok)
	}
	b := got.Bounded(10_000_000, 100)
	if b.Tokens() != 10_000_000 || b.Output != 10_000_000 || b.CostUSD != 100 {
		t.Errorf("bounded %+v", b)
	}
	// A figure JSON cannot hold is no line at all.
	if _, ok := Reported(strings.NewReader(`{"input_tokens":1,"cost_usd":1e999}` + "\n")); ok {
		t.Error("a cost beyond float64 was read")
	}
}
