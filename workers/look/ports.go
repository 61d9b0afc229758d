package look

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// PortsFile records each agent id's port, relative to the project, beside
// the worktree registry and under the same lock.
//
// Not in registry.json: anchor's worktree_for_agent.py rebuilds that file
// from its own record type on every ensure and remove (a top-level
// "project" and "agents", five keys per agent), dropping unknown keys at
// both levels. A "port" in an agent entry or a top-level "ports" map would
// vanish the first time an anchor worker ran, and two agents could then be
// given one port. anchor never opens this file, registry.json stays exactly
// what anchor writes, and an agent with a port but no worktree (a worker in
// the project root) adds no entry that anchor's list would print.
const PortsFile = "var/worktrees/ports.json"

// PortRange is an inclusive range of TCP ports agents are given ports from.
type PortRange struct{ Lo, Hi int }

// DefaultPorts is the range used when none is configured.
var DefaultPorts = PortRange{4100, 4999}

// String is the range as --port-range takes it: LO-HI.
func (r PortRange) String() string { return fmt.Sprintf("%d-%d", r.Lo, r.Hi) }

// Contains reports whether p is in the range.
func (r PortRange) Contains(p int) bool { return p >= r.Lo && p <= r.Hi }

func (r PortRange) check() error {
	switch {
	case r.Lo < 1 || r.Hi > 65535 || r.Hi < 1 || r.Lo > 65535:
		return fmt.Errorf("port range %s: ports run from 1 to 65535", r)
	case r.Lo > r.Hi:
		return fmt.Errorf("port range %s is reversed: the low port comes first (%d-%d)", r, r.Hi, r.Lo)
	}
	return nil
}

// ParsePortRange reads LO-HI, like 4100-4999; LO may equal HI.
func ParsePortRange(s string) (PortRange, error) {
	lo, hi, ok := strings.Cut(strings.TrimSpace(s), "-")
	a, errLo := strconv.Atoi(strings.TrimSpace(lo))
	b, errHi := strconv.Atoi(strings.TrimSpace(hi))
	if !ok || errLo != nil || errHi != nil {
		return PortRange{}, fmt.Errorf("port range %q: want LO-HI, like %s", s, DefaultPorts)
	}
	r := PortRange{a, b}
	return r, r.check()
}

// portGrace is how long a port just given stays its agent's even when a
// state file says the agent is not running: the driver asks for the port
// before it makes the worktree and writes its state file.
const portGrace = 10 * time.Minute

// AssignPort gives agentID a TCP port from r and records it: the agent's
// recorded port when it lies in r, so it is stable across runs; else the
// lowest port of r recorded for no other agent and free on 127.0.0.1 now.
// When there is none, it takes back the port of an agent whose state file
// says it is not live (exited or dead first, then stale), that has not
// asked for it within portGrace and that nothing listens on. Processes
// assigning at once are serialised by the project's lock, so two agents
// never get one port.
func AssignPort(project, agentID string, r PortRange) (int, error) {
	if err := r.check(); err != nil {
		return 0, err
	}
	if strings.TrimSpace(agentID) == "" {
		return 0, errors.New("no agent id to give a port to")
	}
	home, inGit, err := PortHome(project)
	if err != nil {
		return 0, err
	}
	unlock, err := tree.LockProject(home)
	if err != nil {
		return 0, err
	}
	defer unlock()
	if inGit {
		if err := tree.IgnoreVar(home); err != nil {
			return 0, err
		}
	}
	rec, err := LoadPorts(home)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	p, ok := pickPort(home, agentID, r, rec, now)
	if !ok {
		return 0, fmt.Errorf("no free port in %s for %s: each is held by an agent that may be running, or in use on 127.0.0.1 (widen the range, or remove agents that are gone)", r, agentID)
	}
	rec.Ports[agentID] = p
	rec.Given[agentID] = Stamp{now}
	return p, SavePorts(home, rec)
}

// pickPort is agentID's port in r: its recorded one, else the lowest free
// one nobody holds, else one taken back (reclaimable, forgotten in rec).
func pickPort(home, agentID string, r PortRange, rec PortsRecord, now time.Time) (int, bool) {
	if p, ok := rec.Ports[agentID]; ok && r.Contains(p) {
		return p, true
	}
	owner := rec.owners(agentID)
	for _, p := range rec.Extra[agentID] {
		owner[p] = agentID // its own block is not its first port's to take
	}
	for p := r.Lo; p <= r.Hi; p++ {
		if _, taken := owner[p]; !taken && Bindable(p) {
			return p, true
		}
	}
	if p, ok := reclaimable(home, r, rec, rec.owners(agentID), now); ok {
		rec.forget(rec.owners(agentID)[p])
		return p, true
	}
	return 0, false
}

// reclaimable picks the lowest port of r that another agent holds but does
// not use: its state file says it is not live, it was not given the port
// within portGrace, and nothing listens on it. Exited and dead agents give
// theirs up before stale ones, which may only be slow. An agent without a
// state file keeps its port: nothing says it stopped.
func reclaimable(home string, r PortRange, rec PortsRecord, owner map[int]string, now time.Time) (int, bool) {
	states, _ := ReadStates(home)
	health := map[string]Health{}
	for _, st := range states {
		health[st.AgentID] = st.Health(now)
	}
	var held []int
	for p, id := range owner {
		if r.Contains(p) && now.Sub(rec.Given[id].Time) > portGrace {
			held = append(held, p)
		}
	}
	sort.Ints(held)
	for _, want := range []Health{Exited, Dead, Stale} {
		for _, p := range held {
			if health[owner[p]] == want && Bindable(p) {
				return p, true
			}
		}
	}
	return 0, false
}

// PortOf is agentID's recorded port. It only reads.
func PortOf(project, agentID string) (int, bool) {
	ports, err := Ports(project)
	if err != nil {
		return 0, false
	}
	p, ok := ports[agentID]
	return p, ok
}

// Ports is every recorded port, by agent id, agents without a worktree
// included. It only reads.
func Ports(project string) (map[string]int, error) {
	home, _, err := PortHome(project)
	if err != nil {
		return nil, err
	}
	rec, err := LoadPorts(home)
	return rec.Ports, err
}

// PortHome is where project's ports are recorded: its git top level, as for
// worktrees, or the folder itself when it is not in git (a worker may run
// in a plain project root).
func PortHome(project string) (string, bool, error) {
	if top, err := tree.Project(project); err == nil {
		return top, true, nil
	}
	abs, err := filepath.Abs(project)
	if err != nil {
		return "", false, err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", false, fmt.Errorf("%s: not a folder", abs)
	}
	return abs, false, nil
}

// Bindable reports whether a listener could take port on 127.0.0.1 now.
func Bindable(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// PortsRecord is the ports file: each agent's port, and when it last asked
// for it. Extra is the rest of an agent's block (fleetwatch.yaml
// `worktree: {ports: N}`), under a key of its own so "ports" keeps the one
// format other readers know: agent id to its first port.
type PortsRecord struct {
	Extra map[string][]int `json:"extra,omitempty"` // fields sorted, as the registry's
	Given map[string]Stamp `json:"given"`
	Ports map[string]int   `json:"ports"`
}

// owners maps each port held by an agent other than agentID, block ports
// included, to its agent.
func (rec PortsRecord) owners(agentID string) map[int]string {
	owner := map[int]string{}
	for id, p := range rec.Ports {
		if id != agentID {
			owner[p] = id
		}
	}
	for id, ps := range rec.Extra {
		for _, p := range ps {
			if id != agentID {
				owner[p] = id
			}
		}
	}
	return owner
}

// forget drops everything recorded for id: its port and its block.
func (rec PortsRecord) forget(id string) {
	delete(rec.Ports, id)
	delete(rec.Given, id)
	delete(rec.Extra, id)
}

// LoadPorts reads home's ports file; a missing file records nothing.
func LoadPorts(home string) (PortsRecord, error) {
	rec := PortsRecord{Ports: map[string]int{}, Given: map[string]Stamp{}, Extra: map[string][]int{}}
	p := filepath.Join(home, PortsFile)
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("%s: %v (fix or delete it; agents then get ports again)", p, err)
	}
	if rec.Ports == nil {
		rec.Ports = map[string]int{}
	}
	if rec.Given == nil {
		rec.Given = map[string]Stamp{}
	}
	if rec.Extra == nil {
		rec.Extra = map[string][]int{}
	}
	return rec, nil
}

// SavePorts replaces the ports file atomically; keys sorted, indent 2, as
// the registry.
func SavePorts(home string, rec PortsRecord) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return tree.WriteAtomicIn(home, filepath.Join(home, PortsFile), append(data, '\n'))
}

// FreePort forgets agentID's port, and its block with it, and returns the
// port (0 when it had none). The caller holds the project's lock.
func FreePort(home, agentID string) (int, error) {
	rec, err := LoadPorts(home)
	if err != nil {
		return 0, err
	}
	p, ok := rec.Ports[agentID]
	_, hasBlock := rec.Extra[agentID]
	if !ok && !hasBlock {
		return 0, nil
	}
	rec.forget(agentID)
	return p, SavePorts(home, rec)
}

// ReleasePort gives back agentID's port p when it still holds it: a port
// given to a run that never started (nothing to claim, no worktree, an
// executor that would not start) is not hoarded.
func ReleasePort(project, agentID string, p int) error {
	home, _, err := PortHome(project)
	if err != nil {
		return err
	}
	unlock, err := tree.LockProject(home)
	if err != nil {
		return err
	}
	defer unlock()
	rec, err := LoadPorts(home)
	if err != nil || rec.Ports[agentID] != p {
		return err
	}
	_, err = FreePort(home, agentID)
	return err
}

// AssignPorts gives agentID a block of n ports from r: its port
// (AssignPort) first, then n-1 more. The block is stable across runs (the
// ports it had, when they are still in r and nobody else's, in their
// order), never shared with another agent, and a port new to it is free on
// 127.0.0.1 when given. Ports it already had are kept even when something
// listens there: that is most likely its own backend. ReleasePort and
// worktree remove give the whole block back.
func AssignPorts(project, agentID string, r PortRange, n int) ([]int, error) {
	first, err := AssignPort(project, agentID, r)
	if err != nil || n <= 1 {
		return []int{first}, err
	}
	home, _, err := PortHome(project)
	if err != nil {
		return nil, err
	}
	unlock, err := tree.LockProject(home)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := LoadPorts(home)
	if err != nil {
		return nil, err
	}
	block, err := extend(home, agentID, r, n, first, rec)
	if err != nil {
		return nil, err
	}
	rec.Extra[agentID] = block[1:]
	rec.Given[agentID] = Stamp{time.Now()}
	return block, SavePorts(home, rec)
}

// extend is first and n-1 more ports for agentID from r: the ones recorded
// for it that are still its to keep, then the lowest free ones, then ones
// taken back from agents that are gone (reclaimable).
func extend(home, agentID string, r PortRange, n, first int, rec PortsRecord) ([]int, error) {
	block := []int{first}
	taken := rec.owners(agentID)
	taken[first] = agentID
	for _, p := range rec.Extra[agentID] {
		if _, ok := taken[p]; !ok && r.Contains(p) && len(block) < n {
			block = append(block, p)
			taken[p] = agentID
		}
	}
	for p := r.Lo; p <= r.Hi && len(block) < n; p++ {
		if _, ok := taken[p]; !ok && Bindable(p) {
			block = append(block, p)
			taken[p] = agentID
		}
	}
	for len(block) < n {
		others := rec.owners(agentID)
		for _, p := range block {
			delete(others, p)
		}
		p, ok := reclaimable(home, r, rec, others, time.Now())
		if !ok {
			return nil, fmt.Errorf("no %d free ports in %s for %s's block (ports: %d in fleetwatch.yaml): the others are held by agents that may be running, or in use on 127.0.0.1 (widen the range, or remove agents that are gone)", n-len(block), r, agentID, n)
		}
		rec.forget(others[p])
		block = append(block, p)
	}
	return block, nil
}
