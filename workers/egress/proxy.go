// Package egress is the driver's egress proxy: the one way out of the
// sandbox besides the driver's other ports. A contained agent, reviewer or
// check connects over TCP only to the ports its driver names (Landlock,
// ABI 4+); it reaches the world through this proxy, on 127.0.0.1, by HTTP
// CONNECT or a plain http:// request, and only at the hosts fleetwatch.yaml's
// `egress:` allows. The proxy resolves a name itself and dials the address
// it checked, so a name that resolves to loopback or a private network
// never reaches the operator's services; only an address allowed by itself
// does.
package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"

	"github.com/fleetwatch/fleetwatch/internal/config"
)

// Bounds on what one proxy holds for its run.
const (
	// maxConns bounds the connections open to the proxy; more wait in
	// the kernel's queue to be accepted.
	maxConns = 64
	// idle ends a tunnel or a connection nothing crossed for so long.
	idle = 2 * time.Minute
	// dialTimeout bounds resolving a host and connecting to it.
	dialTimeout = 10 * time.Second
	// maxLogged bounds the refusals one run's log gets.
	maxLogged = 20
)

// Proxy is one run's egress proxy.
type Proxy struct {
	allow []config.EgressHost
	log   func(string)
	ln    net.Listener
	srv   *http.Server
	fwd   *httputil.ReverseProxy
	tr    *http.Transport

	logged atomic.Int32

	mu      sync.Mutex
	tunnels map[net.Conn]struct{}
	closed  bool
}

// Start listens on 127.0.0.1 and lets through allow's hosts; log gets a
// line for each refusal (the first maxLogged of them).
func Start(allow []config.EgressHost, log func(string)) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	p := &Proxy{allow: allow, log: log, ln: ln, tunnels: map[net.Conn]struct{}{}}
	p.tr = &http.Transport{
		DialContext:         func(ctx context.Context, _, addr string) (net.Conn, error) { return p.dial(ctx, addr) },
		MaxIdleConns:        8,
		IdleConnTimeout:     idle,
		TLSHandshakeTimeout: dialTimeout,
	}
	p.fwd = &httputil.ReverseProxy{
		Rewrite:       func(*httputil.ProxyRequest) {}, // the absolute URL is the target
		Transport:     p.tr,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.fail(w, r, err)
		},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: dialTimeout, IdleTimeout: idle}
	go p.srv.Serve(netutil.LimitListener(ln, maxConns))
	return p, nil
}

// Port is the proxy's port on 127.0.0.1.
func (p *Proxy) Port() uint16 { return uint16(p.ln.Addr().(*net.TCPAddr).Port) }

// Env are the standard proxy variables naming the proxy, in both cases;
// loopback is not proxied (the metering proxy and the agent's own port
// are reached directly, the sandbox allowing those alone).
func (p *Proxy) Env() []string {
	url := "http://" + p.ln.Addr().String()
	var env []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		env = append(env, k+"="+url, strings.ToLower(k)+"="+url)
	}
	return append(env, "NO_PROXY=127.0.0.1,localhost,::1", "no_proxy=127.0.0.1,localhost,::1")
}

// Close stops the proxy and ends every tunnel through it.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	p.tr.CloseIdleConnections()
	return err
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.tunnel(w, r)
	case r.URL.IsAbs() && r.URL.Scheme == "http" && r.URL.Host != "":
		p.fwd.ServeHTTP(w, r)
	default:
		http.Error(w, "fleetwatch egress proxy: want CONNECT host:port or an http:// URL (https goes through CONNECT)", http.StatusBadRequest)
	}
}

// tunnel answers CONNECT: a connection to the host, then bytes both ways.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	up, err := p.dial(r.Context(), r.Host)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "fleetwatch egress proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(down, up) {
		return
	}
	defer p.untrack(down, up)
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		return
	}
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn, r io.Reader) {
		_, _ = io.Copy(dst, &idleReader{conn: src, r: r, last: &last})
		if tc, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		} else {
			dst.Close()
		}
		done <- struct{}{}
	}
	// What the client sent after its request is in buf already.
	go pipe(up, down, buf.Reader)
	go pipe(down, up, up)
	<-done
	<-done
}

// track records a tunnel's two ends so Close can end it; false when the
// proxy is closed already (both are then closed).
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.tunnels, c)
	}
}

// idleReader reads from conn until nothing crossed the tunnel either way
// for idle: a long download with a quiet upload stays open.
type idleReader struct {
	conn net.Conn
	r    io.Reader
	last *atomic.Int64
}

func (i *idleReader) Read(b []byte) (int, error) {
	for {
		since := time.Since(time.Unix(0, i.last.Load()))
		if since >= idle {
			return 0, errors.New("idle")
		}
		_ = i.conn.SetReadDeadline(time.Now().Add(idle - since))
		n, err := i.r.Read(b)
		if n > 0 {
			i.last.Store(time.Now().UnixNano())
		}
		var ne net.Error
		if n == 0 && errors.As(err, &ne) && ne.Timeout() {
			continue // the other way may have been busy
		}
		return n, err
	}
}

// refusal is a host the proxy will not reach, and why.
type refusal struct{ why string }

func (r refusal) Error() string { return r.why }

// fail answers a request the proxy could not carry: 403 for a refused
// host, with a line in the run's log; 502 for a host that did not answer.
func (p *Proxy) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ref refusal
	if errors.As(err, &ref) {
		target := r.Host
		if r.Method != http.MethodConnect {
			target = r.URL.Redacted()
		}
		if n := p.logged.Add(1); n <= maxLogged && p.log != nil {
			p.log(fmt.Sprintf("egress refused %s %s: %s", r.Method, clip(target), ref.why))
		} else if n == maxLogged+1 && p.log != nil {
			p.log("egress: further refusals are not logged")
		}
		http.Error(w, "fleetwatch egress proxy: "+ref.why, http.StatusForbidden)
		return
	}
	http.Error(w, "fleetwatch egress proxy: "+err.Error(), http.StatusBadGateway)
}

// clip bounds what an agent's request puts in the log.
func clip(s string) string {
	const max = 200
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, s)
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// dial connects to hostport when the allow list lets it, at an address
// checked here: never one the name's resolution slipped in.
func (p *Proxy) dial(ctx context.Context, hostport string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	addrs, err := p.resolve(ctx, hostport)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	var last error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, "tcp", a.String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// resolve is where hostport may be reached, or a refusal.
func (p *Proxy) resolve(ctx context.Context, hostport string) ([]netip.AddrPort, error) {
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, refusal{"want host:port"}
	}
	port64, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port64 == 0 {
		return nil, refusal{"not a port: " + clip(portText)}
	}
	port := uint16(port64)
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		if a.Zone() != "" || !p.allowsAddr(a, port) {
			return nil, refusal{fmt.Sprintf("%s is not in fleetwatch.yaml's egress", clip(hostport))}
		}
		return []netip.AddrPort{netip.AddrPortFrom(a, port)}, nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if !p.allowsName(name, port) {
		return nil, refusal{fmt.Sprintf("%s is not in fleetwatch.yaml's egress", clip(hostport))}
	}
	found, err := net.DefaultResolver.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve %s: %v", name, err)
	}
	out := p.reachable(found, port)
	if len(out) == 0 {
		return nil, refusal{fmt.Sprintf("%s resolves only to loopback, link-local or private addresses (%v); allow the address itself to reach one", name, found)}
	}
	return out, nil
}

// reachable are the addresses a name resolved to that may be reached on
// port: public ones, and those egress allows itself.
func (p *Proxy) reachable(found []netip.Addr, port uint16) []netip.AddrPort {
	var out []netip.AddrPort
	for _, a := range found {
		a = a.Unmap()
		if Public(a) || p.allowsAddr(a, port) {
			out = append(out, netip.AddrPortFrom(a, port))
		}
	}
	return out
}

func (p *Proxy) allowsAddr(a netip.Addr, port uint16) bool {
	for _, h := range p.allow {
		if h.Addr.IsValid() && h.Addr == a && (h.Port == 0 || h.Port == port) {
			return true
		}
	}
	return false
}

func (p *Proxy) allowsName(name string, port uint16) bool {
	for _, h := range p.allow {
		if h.Name == "" || (h.Port != 0 && h.Port != port) {
			continue
		}
		if base, ok := strings.CutPrefix(h.Name, "*."); ok {
			if strings.HasSuffix(name, "."+base) {
				return true
			}
		} else if name == h.Name {
			return true
		}
	}
	return false
}

// cgnat is the carrier-grade NAT range (RFC 6598): private in practice.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// Public reports whether a is an address on the public internet: not
// loopback, link-local, private, unspecified, multicast or shared.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsValid() && a.IsGlobalUnicast() && !a.IsPrivate() && !cgnat.Contains(a) &&
		!(a.Is4() && a.As4()[0] == 0)
}
