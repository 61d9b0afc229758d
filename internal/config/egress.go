package config

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Egress is the `egress:` setting: where contained agents, reviewers and
// checks may connect through the driver's egress proxy. Unset, they reach
// nothing beyond the driver's own ports.
//
//	egress: [proxy.golang.org, registry.npmjs.org, "*.example.com", "10.0.0.5:3128"]
//	egress: open   # no proxy: the network stays open, and every face says so
type Egress struct {
	// Open keeps the network open: TCP is not handled by the sandbox.
	Open bool
	// Allow are the hosts the proxy lets through.
	Allow []EgressHost
	Line  int // where the setting is declared
}

// EgressOpen is the word that keeps the network open.
const EgressOpen = "open"

// EgressHost is one allowed host: a name or an address, on one port or any.
type EgressHost struct {
	// Name is a DNS name in lower case; "*.example.com" allows every name
	// under example.com, not example.com itself. A name is reached only
	// at the public addresses it resolves to.
	Name string
	// Addr is an IP address instead of a name: allowed even when it is
	// loopback, link-local or private.
	Addr netip.Addr
	// Port is the one port allowed; 0 allows any.
	Port uint16
}

func (h EgressHost) String() string {
	host := h.Name
	if h.Addr.IsValid() {
		host = h.Addr.String()
	}
	if h.Port == 0 {
		return host
	}
	if h.Addr.Is6() {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(int(h.Port))
}

// DirectPorts are the ports of the entries written as an address and a
// port ("127.0.0.1:5432"): a contained process connects to them directly
// too, for services that speak no HTTP (a database). Landlock rules name
// ports, not addresses: such a port is open on every host.
func (e Egress) DirectPorts() []uint16 {
	var out []uint16
	for _, h := range e.Allow {
		if h.Addr.IsValid() && h.Port != 0 {
			out = append(out, h.Port)
		}
	}
	return out
}

// WithHosts is e letting through names too, on port 443.
func (e Egress) WithHosts(names ...string) Egress {
	e.Allow = slices.Clone(e.Allow)
	for _, n := range names {
		e.Allow = append(e.Allow, EgressHost{Name: n, Port: 443})
	}
	return e
}

// dnsName is a host name as DNS spells it, with an optional "*." before it.
var dnsName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$`)
})

const egressHint = `want open, or a list of hosts like [proxy.golang.org, "*.example.com", "10.0.0.5:3128"]`

func parseEgress(val *yaml.Node) (Egress, error) {
	e := Egress{Line: val.Line}
	switch {
	case isNull(val):
		return e, nil
	case val.Kind == yaml.ScalarNode && val.Value == EgressOpen:
		e.Open = true
		return e, nil
	case val.Kind != yaml.SequenceNode:
		return e, errorf(val.Line, "egress: %s", egressHint)
	}
	for _, item := range val.Content {
		if item.Kind != yaml.ScalarNode || isNull(item) {
			return e, errorf(item.Line, "egress: each host is a string, %s", egressHint)
		}
		h, err := ParseEgressHost(item.Value)
		if err != nil {
			return e, errorf(item.Line, "egress: %v", err)
		}
		e.Allow = append(e.Allow, h)
	}
	return e, nil
}

// ParseEgressHost reads one `egress:` entry: a host name, "*.name", or an
// IP address, each with an optional :port.
func ParseEgressHost(s string) (EgressHost, error) {
	bad := func(why string) (EgressHost, error) {
		return EgressHost{}, fmt.Errorf("%q is %s (like proxy.golang.org, \"*.example.com\", 10.0.0.5:3128 or \"[::1]:8080\")", s, why)
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		if ap.Port() == 0 {
			return bad("port 0")
		}
		return EgressHost{Addr: ap.Addr().Unmap(), Port: ap.Port()}, nil
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil && a.Zone() == "" {
		return EgressHost{Addr: a.Unmap()}, nil
	}
	host, port := s, ""
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
	}
	h := EgressHost{Name: strings.TrimSuffix(strings.ToLower(host), ".")}
	if port != "" || strings.HasSuffix(s, ":") {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return bad("not a port after the colon")
		}
		h.Port = uint16(n)
	}
	if len(h.Name) > 253 || !dnsName().MatchString(h.Name) {
		return bad("not a host name, an IP address or either with :port")
	}
	return h, nil
}
