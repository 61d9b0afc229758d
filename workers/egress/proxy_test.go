package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
)

// start is a proxy allowing hosts, and the lines it logged.
func start(t *testing.T, hosts ...string) (*Proxy, func() []string) {
	t.Helper()
	var allow []config.EgressHost
	for _, h := range hosts {
		e, err := config.ParseEgressHost(h)
		if err != nil {
			t.Fatal(err)
		}
		allow = append(allow, e)
	}
	var mu sync.Mutex
	var lines []string
	p, err := Start(allow, func(s string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, s)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lines...)
	}
}

// connect asks p for a tunnel to target: the status line, and the
// connection when it is open.
func connect(t *testing.T, p *Proxy, target string) (string, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + strings.TrimSpace(string(body)), nil, nil
	}
	return resp.Status, c, br
}

func upstream(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "upstream says hi")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestConnectReachesOnlyAllowedHosts(t *testing.T) {
	srv := upstream(t)
	other := upstream(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	p, logged := start(t, host, "*.example.invalid", "localhost")

	status, c, br := connect(t, p, host)
	if c == nil {
		t.Fatalf("CONNECT %s: %s", host, status)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := io.ReadAll(resp.Body); string(body) != "upstream says hi" {
		t.Errorf("through the tunnel: %q", body)
	}

	_, otherPort, _ := net.SplitHostPort(strings.TrimPrefix(other.URL, "http://"))
	for target, want := range map[string]string{
		strings.TrimPrefix(other.URL, "http://"): "403 Forbidden fleetwatch egress proxy: 127.0.0.1:" + otherPort + " is not in fleetwatch.yaml's egress",
		"[::1]:" + otherPort:                     "403 Forbidden fleetwatch egress proxy: [::1]:" + otherPort + " is not in fleetwatch.yaml's egress",
		"example.invalid:443":                    "403 Forbidden fleetwatch egress proxy: example.invalid:443 is not in fleetwatch.yaml's egress",
		// An allowed name that resolves to loopback reaches nothing.
		"localhost:" + otherPort: "403 Forbidden fleetwatch egress proxy: localhost resolves only to loopback",
		"nohost":                 "403 Forbidden fleetwatch egress proxy: want host:port",
	} {
		if status, c, _ := connect(t, p, target); c != nil || !strings.HasPrefix(status, want) {
			t.Errorf("CONNECT %s: %q, want %q", target, status, want)
		}
	}
	lines := logged()
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "egress refused CONNECT ") {
		t.Errorf("logged %q", lines)
	}
}

func TestPlainHTTPIsForwardedToAllowedHosts(t *testing.T) {
	srv := upstream(t)
	other := upstream(t)
	p, logged := start(t, strings.TrimPrefix(srv.URL, "http://"))
	proxyURL, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", p.Port()))
	client := &http.Client{Transport: &http.Transport{Proxy: func(*http.Request) (*url.URL, error) { return proxyURL, nil }}}
	resp, err := client.Get(srv.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "upstream says hi" {
		t.Errorf("allowed: %s %q", resp.Status, body)
	}
	resp, err = client.Get(other.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("not allowed: %s", resp.Status)
	}
	if lines := logged(); len(lines) != 1 || !strings.Contains(lines[0], "egress refused GET "+other.URL+"/x") {
		t.Errorf("logged %q", lines)
	}
}

func TestRefusalsLoggedBounded(t *testing.T) {
	p, logged := start(t)
	for range maxLogged + 5 {
		connect(t, p, "example.invalid:443")
	}
	lines := logged()
	if len(lines) != maxLogged+1 || lines[maxLogged] != "egress: further refusals are not logged" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

func TestCloseEndsTunnels(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c) // holds the tunnel open
		}
	}()
	p, _ := start(t, ln.Addr().String())
	status, c, _ := connect(t, p, ln.Addr().String())
	if c == nil {
		t.Fatal(status)
	}
	p.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("after Close the tunnel reads %v, want EOF", err)
	}
}

func TestAllowsName(t *testing.T) {
	p, _ := start(t, "proxy.golang.org", "*.example.com", "git.example.org:443")
	for name, want := range map[string]bool{
		"proxy.golang.org": true, "x.proxy.golang.org": false, "a.example.com": true, "a.b.example.com": true,
		"example.com": false, "badexample.com": false, "git.example.org": true,
	} {
		if got := p.allowsName(name, 443); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	if p.allowsName("git.example.org", 22) {
		t.Error("git.example.org:22 allowed, only :443 is")
	}
}

func TestPublic(t *testing.T) {
	for a, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700::1111": true, "127.0.0.1": false, "::1": false, "10.1.2.3": false,
		"192.168.0.1": false, "172.16.0.1": false, "169.254.169.254": false, "fe80::1": false, "fc00::1": false,
		"0.0.0.0": false, "0.1.2.3": false, "100.64.0.1": false, "224.0.0.1": false, "::ffff:127.0.0.1": false,
	} {
		if got := Public(netip.MustParseAddr(a)); got != want {
			t.Errorf("%s: %v, want %v", a, got, want)
		}
	}
}

func TestEnvNamesTheProxy(t *testing.T) {
	p, _ := start(t)
	env := strings.Join(p.Env(), " ")
	url := fmt.Sprintf("http://127.0.0.1:%d", p.Port())
	for _, want := range []string{"HTTP_PROXY=" + url, "https_proxy=" + url, "ALL_PROXY=" + url, "NO_PROXY=127.0.0.1,localhost,::1", "no_proxy="} {
		if !strings.Contains(env, want) {
			t.Errorf("env %s lacks %s", env, want)
		}
	}
}
