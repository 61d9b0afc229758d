package look

import (
	"path/filepath"
	"sort"

	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// List returns the registered worktrees, by agent id.
func List(project string) ([]tree.Worktree, error) {
	top, err := tree.Project(project)
	if err != nil {
		return nil, err
	}
	reg, err := tree.LoadRegistry(top)
	if err != nil {
		return nil, err
	}
	ports, err := LoadPorts(top)
	if err != nil {
		return nil, err
	}
	out := make([]tree.Worktree, 0, len(reg.Agents))
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
func Lookup(project, agentID string) (tree.Worktree, bool, error) {
	top, err := tree.Project(project)
	if err != nil {
		return tree.Worktree{}, false, err
	}
	reg, err := tree.LoadRegistry(top)
	if err != nil {
		return tree.Worktree{}, false, err
	}
	port, _ := PortOf(top, agentID)
	if wt, ok := reg.Agents[agentID]; ok && tree.IsDir(wt.Path) {
		wt.Port = port
		return wt, true, nil
	}
	path := filepath.Join(top, "var", "worktrees", tree.SafeID(agentID))
	if tree.CheckPathOwner(top, agentID, path) != nil {
		return tree.Worktree{}, false, nil
	}
	registered, err := tree.WorktreeBranches(top)
	if err != nil {
		return tree.Worktree{}, false, err
	}
	if branch, ok := registered[path]; ok && tree.IsDir(path) {
		return tree.Worktree{AgentID: agentID, Branch: branch, Path: path, Project: top, Port: port}, true, nil
	}
	return tree.Worktree{}, false, nil
}
