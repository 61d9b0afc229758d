package serve

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// Rules are what an authorized_keys line's options let its key do. The
// zero value is no restriction.
type Rules struct {
	// From is the from="..." pattern list; nil means from anywhere.
	From []fromPattern
	// NoPTY refuses the key a terminal: its sessions get the board as text.
	NoPTY bool
	// Command, when set, is the only thing the key's sessions run,
	// whatever the client asks: one of serve's own commands.
	Command string
	// Projects is projects="api,web": with several projects served, the
	// line's role holds on these only (projects.go); nil means on every
	// one.
	Projects []string
}

// equal reports whether two rule sets allow the same things.
func (r Rules) equal(o Rules) bool {
	if r.NoPTY != o.NoPTY || r.Command != o.Command || len(r.From) != len(o.From) || !slices.Equal(r.Projects, o.Projects) {
		return false
	}
	for i := range r.From {
		if r.From[i] != o.From[i] {
			return false
		}
	}
	return true
}

// forcedCommands are the commands command="..." may name: the ones serve
// answers without a terminal.
var forcedCommands = []string{"board", "board --once", "board --json"}

// parseRules reads one line's options as OpenSSH would, in order (restrict
// then pty allows a terminal again). An option fleetwatch does not honour
// is an error: a key must not quietly get more than its line says.
func parseRules(opts []string) (Rules, error) {
	var r Rules
	for _, o := range opts {
		name, value, hasValue := strings.Cut(o, "=")
		name = strings.ToLower(name)
		if hasValue {
			v, err := unquoteOption(value)
			if err != nil {
				return r, fmt.Errorf("%s: %v", name, err)
			}
			value = v
		}
		if err := r.apply(name, value, o); err != nil {
			return r, err
		}
	}
	return r, nil
}

// apply takes in the option o, name=value (unquoted), in its turn.
func (r *Rules) apply(name, value, o string) error {
	switch name {
	case "from":
		pats, err := parseFrom(value)
		if err != nil {
			return fmt.Errorf("from=%q: %v", value, err)
		}
		r.From = pats
	case "restrict", "no-pty":
		r.NoPTY = true
	case "pty":
		r.NoPTY = false
	case "projects":
		if r.Projects = projectNames(value); len(r.Projects) == 0 {
			return fmt.Errorf("projects=%q: name at least one project, like projects=\"api,web\"", value)
		}
	case "command":
		cmd := strings.Join(strings.Fields(value), " ")
		if !oneOfStrings(cmd, forcedCommands) {
			return fmt.Errorf("command=%q: fleetwatch serve runs no programs; command= may only be %q", value, forcedCommands)
		}
		r.Command = cmd
	// Forwarding and ~/.ssh/rc never happen here, so these hold as written.
	case "no-port-forwarding", "no-agent-forwarding", "no-x11-forwarding", "no-user-rc":
	case "cert-authority":
		return fmt.Errorf("cert-authority: fleetwatch serve accepts no certificates; list each person's own key")
	default:
		return fmt.Errorf("option %q is not one fleetwatch serve honours (it honours from=, restrict, pty, no-pty, command=, projects= and the no-*-forwarding ones)", o)
	}
	return nil
}

// unquoteOption is an option's value: double-quoted, `\"` for a quote.
func unquoteOption(v string) (string, error) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", fmt.Errorf("the value must be in double quotes")
	}
	return strings.ReplaceAll(v[1:len(v)-1], `\"`, `"`), nil
}

func oneOfStrings(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// fromPattern is one entry of a from= list: a wildcard pattern (`*`, `?`)
// matched against the client's address, or a CIDR block; negated by `!`.
type fromPattern struct {
	negate bool
	glob   string       // lower case; "" when prefix is set
	prefix netip.Prefix // valid for a CIDR entry
}

func parseFrom(list string) ([]fromPattern, error) {
	var out []fromPattern
	for _, p := range strings.Split(list, ",") {
		var fp fromPattern
		if fp.negate = strings.HasPrefix(p, "!"); fp.negate {
			p = p[1:]
		}
		switch {
		case p == "":
			return nil, fmt.Errorf("an empty pattern")
		case strings.Contains(p, "/"):
			pre, err := netip.ParsePrefix(p)
			if err != nil || pre.Masked() != pre {
				return nil, fmt.Errorf("%q is not a CIDR block (address/bits, host bits zero)", p)
			}
			fp.prefix = pre
		default:
			fp.glob = strings.ToLower(p)
		}
		out = append(out, fp)
	}
	return out, nil
}

// allows reports whether a client at addr may use the key: as OpenSSH,
// a negated entry that matches refuses, else any entry that matches allows.
// Names are never looked up (OpenSSH's UseDNS no): patterns match the address.
func (r Rules) allows(addr net.Addr) bool {
	if r.From == nil {
		return true
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return false
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return false
	}
	ip = ip.Unmap()
	text := ip.String()
	allowed := false
	for _, p := range r.From {
		var m bool
		if p.prefix.IsValid() {
			m = p.prefix.Contains(ip)
		} else {
			m = globMatch(p.glob, text)
		}
		if m && p.negate {
			return false
		}
		allowed = allowed || m
	}
	return allowed
}

// globMatch matches s against a pattern of `*` (any run) and `?` (one
// character), iteratively so a hostile pattern costs O(len(p)·len(s)).
func globMatch(p, s string) bool {
	px, sx, starP, starS := 0, 0, -1, 0
	for sx < len(s) {
		switch {
		case px < len(p) && (p[px] == '?' || p[px] == s[sx]):
			px++
			sx++
		case px < len(p) && p[px] == '*':
			starP, starS = px, sx
			px++
		case starP >= 0:
			starS++
			px, sx = starP+1, starS
		default:
			return false
		}
	}
	for px < len(p) && p[px] == '*' {
		px++
	}
	return px == len(p)
}
