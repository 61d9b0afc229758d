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
	forces             *grant // the first line forcing a command
}

// at is the identity the key's lines give a client at addr; ok is false
// when no line's from= allows it.
func (e keyEntry) at(addr net.Addr) (id Identity, ok bool) {
	id = Identity{Agent: e.agent, Fingerprint: e.fingerprint}
	var uses, views projectSet
	for _, g := range e.grants {
		if g.viewer {
			views.add(g.rules.Projects)
		}
		if !g.rules.allows(addr) {
			continue
		}
		id.Lines = append(id.Lines, g.where)
		uses.add(g.rules.Projects)
		id.Rules.NoPTY = id.Rules.NoPTY || g.rules.NoPTY
		if g.rules.Command != "" {
			id.Rules.Command = g.rules.Command
		}
	}
	id.uses, id.views = uses.scope(), views.scope()
	id.Viewer = id.views.listed
	return id, len(id.Lines) > 0
}

// add is e with the line g, or an error naming g and the key's earlier
// line it cannot be combined with: one forcing another command.
func (e keyEntry) add(g grant) (keyEntry, error) {
	if f := e.forces; f != nil && g.rules.Command != "" && g.rules.Command != f.rules.Command {
		return e, fmt.Errorf("%s: command=%q, but this key's line at %s forces command=%q: a session using both lines could run neither; give the key's lines one command= (or none)",
			g.where, g.rules.Command, f.where, f.rules.Command)
	}
	if e.forces == nil && g.rules.Command != "" {
		e.forces = &g
	}
	e.grants = append(e.grants, g)
	return e, nil
}

// projectSet gathers the projects= of several lines into a scope, sorted
// once (a key may be on a thousand lines).
type projectSet struct {
	listed, every bool
	names         []string
}

// add is one line's projects= (nil: every project).
func (p *projectSet) add(names []string) {
	p.listed = true
	if names == nil {
		p.every = true
	}
	if !p.every {
		p.names = append(p.names, names...)
	}
}

func (p projectSet) scope() scope {
	if !p.listed || p.every {
		return scope{listed: p.listed}
	}
	slices.Sort(p.names)
	return scope{listed: true, names: slices.Compact(p.names)}
}
