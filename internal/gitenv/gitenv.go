// Package gitenv gives git child processes an environment that cannot send
// them to another repository: fleetwatch always names the repository with
// `git -C`, but a hook or an outer git command may have set GIT_DIR and
// friends, which would win over -C.
package gitenv

import (
	"os"
	"strings"
)

// locating are the variables that choose a repository, its work tree or
// its index.
var locating = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_COMMON_DIR": true,
	"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
	"GIT_NAMESPACE": true, "GIT_PREFIX": true,
}

// Env is this process's environment without the locating variables, plus extra.
func Env(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !locating[k] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}
