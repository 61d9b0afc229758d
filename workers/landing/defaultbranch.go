package landing

import "strings"

// DefaultBranch is the repository's own main line, the branch scaffold
// offers as the integration branch: origin's HEAD branch when the clone
// knows it, else the branch checked out (born or not); "" when HEAD is
// detached or dir is in no repository.
func DefaultBranch(dir string) string {
	if ref, err := git(dir, "symbolic-ref", "-q", "refs/remotes/origin/HEAD"); err == nil {
		if b, ok := strings.CutPrefix(ref, "refs/remotes/origin/"); ok && b != "" {
			return b
		}
	}
	if b, err := git(dir, "symbolic-ref", "-q", "--short", "HEAD"); err == nil {
		return b
	}
	return ""
}
