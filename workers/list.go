package workers

import (
	"path/filepath"
	"sort"
)

// List returns the registered worktrees, by agent id.
func List(project string) ([]Worktree, error) {
	top, err := Project(project)
	if err != nil {
		return nil, err
	}
	reg, err := load(top)
	if err != nil {
		return nil, err
	}
	ports, err := loadPorts(top)
	if err != nil {
		return nil, err
	}
	out := make([]Worktree, 0, len(reg.Agents))
	for id, wt := range reg.Agents {
		wt.Port = ports.Ports[id]
		out = append(out, wt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AgentID < out[j].AgentID })
	return out, nil
}

// Lookup finds agentID's worktree: its registry entry when the folder is
// there, else the default path var/worktrees/<safe id> when git has a
// worktree there (made by hand or by a registry that was lost) and the
// registry does not give it to another agent id.
func Lookup(project, agentID string) (Worktree, bool, error) {
	top, err := Project(project)
	if err != nil {
		return Worktree{}, false, err
	}
	reg, err := load(top)
	if err != nil {
		return Worktree{}, false, err
	}
	port, _ := PortOf(top, agentID)
	if wt, ok := reg.Agents[agentID]; ok && isDir(wt.Path) {
		wt.Port = port
		return wt, true, nil
	}
	path := filepath.Join(top, "var", "worktrees", SafeID(agentID))
	if notOthers(top, agentID, path) != nil {
		return Worktree{}, false, nil
	}
	registered, err := worktreeBranches(top)
	if err != nil {
		return Worktree{}, false, err
	}
	if branch, ok := registered[path]; ok && isDir(path) {
		return Worktree{AgentID: agentID, Branch: branch, Path: path, Project: top, Port: port}, true, nil
	}
	return Worktree{}, false, nil
}
