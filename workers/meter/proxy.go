package meter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"
)

// maxJSONBody bounds how much of a plain JSON response is kept to read its
// usage; the response itself is forwarded whole whatever its size. Of a
// body past it only its first and last keptEnds bytes are kept, and its
// usage is read there (scanUsage).
const maxJSONBody = 8 << 20

// keptEnds is how much of each end of an answer too big to hold is kept:
// a usage object is a few hundred bytes.
const keptEnds = 64 << 10

// maxRequestRead bounds how much of a completions request is read to ask
// for its stream's usage; a bigger one goes on as it is, and its answer is
// estimated if it reports no usage.
const maxRequestRead = 8 << 20

// maxInFlight bounds the requests the agent has upstream at once; more
// wait their turn. With maxJSONBody and maxRequestRead it bounds what one
// run's proxy holds.
const maxInFlight = 64

// maxConns bounds the agent's open connections to its proxy (the driver's
// file descriptors); more wait in the kernel's queue to be accepted.
const maxConns = 2 * maxInFlight

// maxEventLine bounds one server-sent event line kept whole to read its
// usage; of a longer one only its last keptEnds bytes are.
const maxEventLine = 1 << 20

// Proxy is one run's metering proxy: a loopback HTTP server that forwards
// everything to one upstream and counts the usage of each response.
type Proxy struct {
	upstream *url.URL
	ln       net.Listener
	srv      *http.Server
	onUsage  func(Usage)

	slots chan struct{} // one per request upstream (maxInFlight)

	mu     sync.Mutex
	total  Usage
	resume chan struct{} // non-nil while paused; closed to resume
}

// Start listens on 127.0.0.1 and forwards to upstream (an endpoint's
// base_url, http or https). onUsage, when set, is called after each
// response with what it spent, from the goroutine that served it.
func Start(upstream string, onUsage func(Usage)) (*Proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base_url %q: not an http(s) URL", upstream)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("metering proxy: %w", err)
	}
	p := &Proxy{upstream: u, ln: ln, onUsage: onUsage, slots: make(chan struct{}, maxInFlight)}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.Host = u.Scheme, u.Host, u.Host
			// The transport then asks for gzip itself and hands the
			// agent the plain body, which is what can be read.
			r.Out.Header.Del("Accept-Encoding")
		},
		FlushInterval:  -1, // a streamed token reaches the agent as it comes
		ModifyResponse: p.meter,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "fleetwatch metering proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: p.gate(rp), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	go p.srv.Serve(netutil.LimitListener(ln, maxConns))
	return p, nil
}

// URL is the base_url the agent is given: the proxy's address with the
// upstream's path and query, so {base_url}/chat/completions still names
// the route.
func (p *Proxy) URL() string {
	u := "http://" + p.ln.Addr().String() + strings.TrimSuffix(p.upstream.Path, "/")
	if p.upstream.RawQuery != "" {
		u += "?" + p.upstream.RawQuery
	}
	return u
}

// Usage is everything the run's calls have spent so far.
func (p *Proxy) Usage() Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total
}

// Pause holds every request that arrives until Resume; requests already
// upstream finish.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resume == nil {
		p.resume = make(chan struct{})
	}
}

// Resume lets held requests go on.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resume != nil {
		close(p.resume)
		p.resume = nil
	}
}

// Close stops the proxy and whatever it is forwarding.
func (p *Proxy) Close() error { return p.srv.Close() }

func (p *Proxy) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		wait := p.resume
		p.mu.Unlock()
		if wait != nil {
			select {
			case <-wait:
			case <-r.Context().Done():
				return
			}
		}
		select {
		case p.slots <- struct{}{}:
			defer func() { <-p.slots }()
		case <-r.Context().Done():
			return
		}
		if err := askUsage(r); err != nil {
			http.Error(w, "fleetwatch metering proxy: "+err.Error(), http.StatusBadRequest)
			return
		}
		c := &call{free: freeCall(r)}
		if r.Body != nil {
			r.Body = &countedBody{ReadCloser: r.Body, n: &c.sent}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callKey{}, c)))
	})
}

// call is what the proxy knows of one request on its way: the bytes sent
// upstream, for the estimate of an answer with no usage, and whether it
// is a call no model answers (free: counted as nothing, never estimated).
type call struct {
	sent atomic.Int64
	free bool
}

// freeCall reports whether r asks something no model spends tokens on: a
// GET or HEAD (a model list), or Anthropic's or Gemini's token count. An
// upstream generates nothing for either, so an agent gains nothing by
// dressing a call as one.
func freeCall(r *http.Request) bool {
	return r.Method == http.MethodGet || r.Method == http.MethodHead || strings.HasSuffix(r.URL.Path, "/count_tokens") ||
		strings.HasSuffix(r.URL.Path, ":countTokens")
}

type callKey struct{}

// countedBody counts the bytes read through it.
type countedBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// askUsage has a streamed completions request (OpenAI's chat or legacy
// completions, "stream": true) ask for its usage: a stream reports none
// without stream_options.include_usage, so the proxy sets it. A request it
// cannot read as JSON, or over maxRequestRead, goes on as it is; the error
// is a body that could not be read at all.
func askUsage(r *http.Request) error {
	if r.Method != http.MethodPost || r.Body == nil || r.Header.Get("Content-Encoding") != "" ||
		!strings.HasSuffix(strings.TrimRight(r.URL.Path, "/"), "/completions") {
		return nil
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxRequestRead+1))
	if err != nil {
		return fmt.Errorf("reading the request: %v", err)
	}
	if len(head) > maxRequestRead {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
		return nil
	}
	body := withUsage(head)
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r.Header.Del("Content-Length")
	return nil
}

// withUsage is a completions request body that asks for its stream's
// usage: body itself when it is not a JSON object with "stream": true, or
// already asks.
func withUsage(body []byte) []byte {
	var req map[string]json.RawMessage
	if !bytes.Contains(body, []byte(`"stream"`)) || json.Unmarshal(body, &req) != nil || string(req["stream"]) != "true" {
		return body
	}
	var opts map[string]json.RawMessage
	if raw, ok := req["stream_options"]; ok && json.Unmarshal(raw, &opts) != nil {
		return body // not an object: the upstream refuses it, or the answer is estimated
	}
	if opts == nil {
		opts = map[string]json.RawMessage{}
	}
	if string(opts["include_usage"]) == "true" {
		return body
	}
	opts["include_usage"] = json.RawMessage("true")
	req["stream_options"], _ = json.Marshal(opts)
	out, err := json.Marshal(req)
	if err != nil {
		return body
	}
	return out
}

// meter wraps a response's body so its usage is read as the agent reads it.
func (p *Proxy) meter(resp *http.Response) error {
	c, _ := resp.Request.Context().Value(callKey{}).(*call)
	if c == nil {
		c = &call{}
	}
	if c.free {
		return nil
	}
	ct := resp.Header.Get("Content-Type")
	m := &meteredBody{ReadCloser: resp.Body, sse: strings.HasPrefix(ct, "text/event-stream"), call: c, done: p.add}
	resp.Body = m
	return nil
}

// add counts one call.
func (p *Proxy) add(u Usage) {
	p.mu.Lock()
	p.total.Add(u)
	p.mu.Unlock()
	if p.onUsage != nil {
		p.onUsage(u)
	}
}

// meteredBody passes a response through and reads its usage on the way:
// event by event for a stream, at its end for a JSON body. What it cannot
// read is estimated from the call's bytes.
type meteredBody struct {
	io.ReadCloser
	sse  bool
	call *call
	read int64        // the answer's bytes so far
	buf  bytes.Buffer // the JSON body so far, or the unfinished event line
	over bool         // buf passed its bound: only head and tail are kept
	head []byte       // a JSON body's first keptEnds bytes, once over
	tail tail         // its last, or an event line's

	got   Usage
	found bool // some usage was read
	bad   bool // some usage had a figure below zero
	once  sync.Once
	done  func(Usage)
}

func (b *meteredBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	b.take(p[:n])
	if err != nil {
		b.finish()
	}
	return n, err
}

func (b *meteredBody) Close() error {
	b.finish()
	return b.ReadCloser.Close()
}

func (b *meteredBody) take(p []byte) {
	if !b.sse {
		if !b.over && b.buf.Len()+len(p) > maxJSONBody {
			b.over = true
			b.head = bytes.Clone(b.buf.Bytes()[:min(b.buf.Len(), keptEnds)])
			b.tail.write(b.buf.Bytes())
			b.buf = bytes.Buffer{}
		}
		b.keep(p)
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.keepLine(p)
			return
		}
		b.keepLine(p[:i])
		b.endLine()
		p = p[i+1:]
	}
}

// keep keeps p: in buf, or once over, in the tail.
func (b *meteredBody) keep(p []byte) {
	if b.over {
		b.tail.write(p)
	} else {
		b.buf.Write(p)
	}
}

func (b *meteredBody) keepLine(p []byte) {
	if !b.over && b.buf.Len()+len(p) > maxEventLine {
		b.over = true
		b.tail.write(b.buf.Bytes())
		b.buf.Reset()
	}
	b.keep(p)
}

// endLine reads the event line kept: whole, or its tail when it was too
// long to keep.
func (b *meteredBody) endLine() {
	if b.over {
		b.note(scanUsage(b.tail.bytes()))
	} else {
		b.event(b.buf.Bytes())
	}
	b.buf.Reset()
	b.tail.reset()
	b.over = false
}

// event reads one line of a server-sent event stream: only data lines
// carry JSON.
func (b *meteredBody) event(line []byte) {
	data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data:"))
	if !ok {
		return
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return // [DONE]
	}
	b.note(fromJSON(data))
}

// note folds what one object said of the usage into the call's.
func (b *meteredBody) note(u Usage, r reading) {
	switch r {
	case gotUsage:
		merge(&b.got, u)
		b.found = true
	case badUsage:
		b.bad = true
	}
	if r != gotUsage && u.Model != "" && b.got.Model == "" {
		b.got.Model = u.Model
	}
}

func (b *meteredBody) finish() {
	b.once.Do(func() {
		switch {
		case b.sse:
			if b.buf.Len() > 0 || b.over {
				b.endLine() // a last line with no newline
			}
		case b.over:
			b.note(scanUsage(b.tail.bytes()))
			if !b.found && !b.bad {
				b.note(scanUsage(b.head))
			}
		default:
			b.note(fromJSON(bytes.TrimSpace(b.buf.Bytes())))
		}
		b.buf, b.head, b.tail = bytes.Buffer{}, nil, tail{}
		b.done(b.usage())
	})
}

// usage is what the call spent: the usage its answer reported, held to
// MaxCallTokens; or, when that could not be read, had a figure below zero
// or counted no token, its estimate from the bytes each way.
func (b *meteredBody) usage() Usage {
	if !b.found || b.bad || b.got.Tokens() == 0 {
		u := Estimate(b.call.sent.Load(), b.read)
		u.Model = b.got.Model
		return u
	}
	u := b.got.Bounded(MaxCallTokens, 0)
	u.Calls = 1
	return u
}

// tail keeps the last keptEnds bytes written to it.
type tail struct{ b []byte }

func (t *tail) write(p []byte) {
	if len(p) >= keptEnds {
		t.b = append(t.b[:0], p[len(p)-keptEnds:]...)
		return
	}
	if len(t.b)+len(p) > 2*keptEnds {
		t.b = append(t.b[:0], t.b[len(t.b)-(keptEnds-len(p)):]...)
	}
	t.b = append(t.b, p...)
}

// bytes is what is kept: at least the last keptEnds bytes written.
func (t *tail) bytes() []byte { return t.b }

func (t *tail) reset() { t.b = t.b[:0] }
