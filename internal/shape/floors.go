package shape

import (
	"fmt"
	"go/ast"
	"strings"
)

// workerFloors are the floors inside workers, bottom first. The folders
// say which floor a package stands on: a package under workers/ imports
// its own children and packages of lower floors here, never its parent
// and never a sibling on its floor or above; workers itself, the work
// loop, is the top and imports them all. A new folder under workers/ gets
// a line here.
var workerFloors = [][]string{
	{"tree", "meter", "coord", "egress", "forge", "converse"}, // worktrees and git; what a run spends; decisions; the way out; the forge; talking to an agent
	{"ledger"},          // what runs spent, and a run's meter
	{"look", "contain"}, // what workers leave and faces read; the sandbox glue
	{"proc"},            // processes: spawn, stop, supervise, reap, timers
	{"seat"},            // an agent's worktree taken and given back, its backend
	{"landing"},         // the landing queue
	{"notify"},          // notices of what happened
}

// workerFloor is the floor of workers/<name>/…, -1 when no floor lists it.
func workerFloor(dir string) int {
	name, _, _ := strings.Cut(strings.TrimPrefix(dir, "workers/"), "/")
	for i, floor := range workerFloors {
		for _, n := range floor {
			if n == name {
				return i
			}
		}
	}
	return -1
}

// workerFloorBreaches lists each import in rel, a file under workers/,
// that points up or sideways inside workers: to its parent, or to a
// package not on a lower floor of workerFloors. Test support (packages
// named *test) and programs are exempt, as for the house's floors.
func workerFloorBreaches(rel string, f *ast.File) []string {
	dir := rel[:max(strings.LastIndex(rel, "/"), 0)]
	if !strings.HasPrefix(dir, "workers/") || strings.HasSuffix(f.Name.Name, "test") || f.Name.Name == "main" {
		return nil
	}
	mine := workerFloor(dir)
	var out []string
	if mine < 0 {
		out = append(out, fmt.Sprintf("%s: %s is on no floor of workers: add it to workerFloors (internal/shape/floors.go)", rel, dir))
	}
	for _, imp := range f.Imports {
		dep, ok := strings.CutPrefix(strings.Trim(imp.Path.Value, `"`), module+"/")
		if !ok || (dep != "workers" && !strings.HasPrefix(dep, "workers/")) || strings.HasPrefix(dep, dir+"/") {
			continue // outside workers, or a child of this package
		}
		if msg := workerImportBreach(dir, dep, mine); msg != "" {
			out = append(out, rel+": "+msg)
		}
	}
	return out
}

// workerImportBreach says why dir, on floor mine of workers, may not
// import dep, another package of workers, or "" when it may.
func workerImportBreach(dir, dep string, mine int) string {
	switch theirs := workerFloor(dep); {
	case strings.HasPrefix(dir, dep+"/"):
		return fmt.Sprintf("imports %s, its parent: a child never imports its parent", dep)
	case theirs < 0:
		return fmt.Sprintf("imports %s, which is on no floor of workers (internal/shape/floors.go)", dep)
	case mine < 0:
		return ""
	case theirs >= mine:
		return fmt.Sprintf("imports %s, on floor %d of workers, not below its own (%d): imports point down (internal/shape/floors.go)", dep, theirs+1, mine+1)
	}
	return ""
}
