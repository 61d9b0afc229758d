package landing

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
)

// An approval (or a review) is of one commit. A later tip keeps it only
// when landing that tip gives, byte for byte and mode for mode, the tree
// landing the approved commit would give on the same integration tip: a
// rebase that changed no content. Tree ids decide it, so a binary file's
// bytes, an executable bit or a file turned symlink all count, which `git
// range-diff` (which called them `=`) does not see.

// SameLanding reports whether merging tip onto onto gives the tree that
// merging approved onto onto gives, neither conflicting. Nothing is cached:
// each call asks git.
func SameLanding(project, onto, approved, tip string) (bool, error) {
	if approved == tip {
		return true, nil
	}
	want, err := mergedTree(project, onto, approved)
	if err != nil {
		return false, err
	}
	got, err := mergedTree(project, onto, tip)
	if err != nil {
		return false, err
	}
	return want != "" && want == got, nil
}

// mergedTree is the tree merging tip onto onto gives, "" when it conflicts.
func mergedTree(project, onto, tip string) (string, error) {
	for _, c := range []string{onto, tip} {
		if !treeID.MatchString(c) {
			return "", fmt.Errorf("commit %q: not a commit id", c)
		}
	}
	r, err := gitenv.Run(context.Background(), gitenv.Call{Dir: project, Args: []string{"merge-tree", "--write-tree", "--no-messages", onto, tip}})
	if err != nil && r.Code != 1 {
		return "", fmt.Errorf("merging %s onto %s: %v", short(tip), short(onto), err)
	}
	tree, _, _ := strings.Cut(cmp.Or(r.Text(), strings.TrimSpace(r.Stderr)), "\n")
	if !treeID.MatchString(tree) {
		return "", fmt.Errorf("merging %s onto %s: git merge-tree said %q", short(tip), short(onto), cmp.Or(tree, "nothing"))
	}
	if r.Code != 0 {
		return "", nil // a conflict: the tree is written, with markers
	}
	return tree, nil
}
