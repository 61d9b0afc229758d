package serve

import (
	"fmt"
	"net"
	"slices"
)

// A key may be listed on several lines, in either file; each line's
// options bind to what that line grants, never to the key:
//
//   - A line is used by a session when its from= allows the client's
//     address. A key none of whose lines allows the address is refused.
//   - The session is shown the projects its used lines name (every one for
//     a line without projects=), as a viewer on those any viewers line of
//     the key names, used or not (a viewers line demotes wherever the key
//     logs in from), as an operator on the rest.
//   - The session gets the strictest rules of its used lines: no terminal
//     if one says no-pty (or restrict), and the command one forces.
//   - Two lines of a key forcing different commands are refused when the
//     files are read, naming both: no session could honour both.

// grant is one line of a key: its file's role and its own options.
type grant struct {
	viewer bool
	rules  Rules
	where  string // FILE:LINE
}

// keyEntry is a key with every line that lists it, in the order read
// (operators' file first).
type keyEntry struct {
	agent, fingerprint string
	grants             []grant
}

// at is the identity the key's lines give a client at addr; ok is false
// when no line's from= allows it.
func (e keyEntry) at(addr net.Addr) (id Identity, ok bool) {
	id = Identity{Agent: e.agent, Fingerprint: e.fingerprint}
	for _, g := range e.grants {
		if g.viewer {
			id.views = id.views.union(g.rules.Projects)
		}
		if !g.rules.allows(addr) {
			continue
		}
		id.Lines = append(id.Lines, g.where)
		id.uses = id.uses.union(g.rules.Projects)
		id.Rules.NoPTY = id.Rules.NoPTY || g.rules.NoPTY
		if g.rules.Command != "" {
			id.Rules.Command = g.rules.Command
		}
	}
	id.Viewer = id.views.listed
	return id, len(id.Lines) > 0
}

// checkLine refuses a key's line that cannot be combined with the key's
// earlier ones: a forced command other than one already forced.
func checkLine(earlier []grant, g grant) error {
	for _, p := range earlier {
		if p.rules.Command != "" && g.rules.Command != "" && p.rules.Command != g.rules.Command {
			return fmt.Errorf("%s: command=%q, but this key's line at %s forces command=%q: a session using both lines could run neither; give the key's lines one command= (or none)",
				g.where, g.rules.Command, p.where, p.rules.Command)
		}
	}
	return nil
}

// union is c with the projects names (nil: every project) added.
func (c scope) union(names []string) scope {
	if c.listed && c.names == nil || names == nil {
		return scope{listed: true}
	}
	all := append(slices.Clone(c.names), names...)
	slices.Sort(all)
	return scope{listed: true, names: slices.Compact(all)}
}
