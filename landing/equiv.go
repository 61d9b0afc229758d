package landing

import (
	"fmt"
	"regexp"
	"strings"

	"fleetwatch/model"
)

// rangeDiffPair is one pair line of `git range-diff`: "1:  3f2a1c9 = 1:  9e8d7c6 subject",
// or "-:  ------- > 2:  9e8d7c6 subject" for a commit only one side has.
var rangeDiffPair = regexp.MustCompile(`^\s*(?:\d+|-):\s+[0-9a-f-]+ ([=!<>]) (?:\d+|-):\s+[0-9a-f-]+`)

// PureRebase reports whether newTip carries the same change as oldTip
// (`git range-diff` of each against its merge base with integration shows
// every commit as `=`), so a review or approval of oldTip still holds.
// integration is the branch's name. Nothing is cached: each call asks git.
func PureRebase(project, integration, oldTip, newTip string) (bool, error) {
	if oldTip == newTip {
		return true, nil
	}
	ref := model.BranchRef(integration)
	oldBase, err := git(project, "merge-base", ref, oldTip)
	if err != nil {
		return false, fmt.Errorf("merge base of %s and %s: %v", integration, short(oldTip), err)
	}
	newBase, err := git(project, "merge-base", ref, newTip)
	if err != nil {
		return false, fmt.Errorf("merge base of %s and %s: %v", integration, short(newTip), err)
	}
	out, err := git(project, "range-diff", "--no-color", "--no-patch", oldBase+".."+oldTip, newBase+".."+newTip)
	if err != nil {
		return false, err
	}
	return allEqual(out), nil
}

// allEqual reads range-diff's pair lines: every one `=` (which also means
// both sides have the same number of commits), and at least one.
func allEqual(out string) bool {
	pairs := 0
	for _, line := range strings.Split(out, "\n") {
		m := rangeDiffPair.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] != "=" {
			return false
		}
		pairs++
	}
	return pairs > 0
}
