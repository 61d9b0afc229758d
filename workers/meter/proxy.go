package meter

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// maxJSONBody bounds how much of a plain JSON response is kept to read its
// usage; the response itself is forwarded whole whatever its size. A body
// past it is counted as a call with no usage.
const maxJSONBody = 8 << 20

// maxInFlight bounds the requests the agent has upstream at once; more
// wait their turn. With maxJSONBody it bounds what one run's proxy holds.
const maxInFlight = 64

// maxConns bounds the agent's open connections to its proxy (the driver's
// file descriptors); more wait in the kernel's queue to be accepted.
const maxConns = 2 * maxInFlight

// maxEventLine bounds one server-sent event line kept to read its usage.
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
		next.ServeHTTP(w, r)
	})
}

// meter wraps a response's body so its usage is read as the agent reads it.
func (p *Proxy) meter(resp *http.Response) error {
	ct := resp.Header.Get("Content-Type")
	m := &meteredBody{ReadCloser: resp.Body, sse: strings.HasPrefix(ct, "text/event-stream"), done: p.add}
	resp.Body = m
	return nil
}

func (p *Proxy) add(u Usage) {
	u.Calls = 1
	p.mu.Lock()
	p.total.Add(u)
	p.mu.Unlock()
	if p.onUsage != nil {
		p.onUsage(u)
	}
}

// meteredBody passes a response through and reads its usage on the way:
// event by event for a stream, at its end for a JSON body.
type meteredBody struct {
	io.ReadCloser
	sse  bool
	buf  bytes.Buffer // the JSON body so far, or the unfinished event line
	over bool         // buf passed its bound: nothing more is kept
	got  Usage
	once sync.Once
	done func(Usage)
}

func (b *meteredBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
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
			b.buf = bytes.Buffer{}
		}
		if !b.over {
			b.buf.Write(p)
		}
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.keepLine(p)
			return
		}
		b.keepLine(p[:i])
		if !b.over {
			b.event(b.buf.Bytes())
		}
		b.buf.Reset()
		b.over = false
		p = p[i+1:]
	}
}

func (b *meteredBody) keepLine(p []byte) {
	if b.over || b.buf.Len()+len(p) > maxEventLine {
		b.over = true
		return
	}
	b.buf.Write(p)
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
	if u, ok := fromJSON(data); ok {
		merge(&b.got, u)
	} else if u.Model != "" && b.got.Model == "" {
		b.got.Model = u.Model
	}
}

func (b *meteredBody) finish() {
	b.once.Do(func() {
		if !b.sse && !b.over {
			if u, ok := fromJSON(bytes.TrimSpace(b.buf.Bytes())); ok {
				b.got = u
			}
		}
		b.buf = bytes.Buffer{}
		b.done(b.got)
	})
}
