package look

import (
	"strconv"
	"strings"

	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// BranchCommits is the committer time (Unix seconds) of every branch's
// head, local and remote-tracking (origin/feature/x counts for feature/x:
// a worker on another machine pushes there), the later of the two: one git
// call, for telling a claimed plan's progress. Nil when git cannot say.
func BranchCommits(project string) map[string]float64 {
	out, err := tree.Git(project, "for-each-ref", "--format=%(refname)%00%(committerdate:unix)", "refs/heads/", "refs/remotes/")
	if err != nil {
		return nil
	}
	times := map[string]float64{}
	for _, line := range strings.Split(out, "\n") {
		ref, when, ok := strings.Cut(line, "\x00")
		secs, err := strconv.ParseInt(when, 10, 64)
		if !ok || err != nil {
			continue
		}
		name, local := strings.CutPrefix(ref, "refs/heads/")
		if !local {
			// refs/remotes/<remote>/<branch>
			_, name, ok = strings.Cut(strings.TrimPrefix(ref, "refs/remotes/"), "/")
			if !ok {
				continue
			}
		}
		times[name] = max(times[name], float64(secs))
	}
	return times
}
