// Package gitenv is how fleetwatch runs git: in a named repository, with
// nothing from that repository's config or from the environment able to run
// code in the operator's process. Agents can write the shared git dir, so
// its hooks, fsmonitor, pager and diff drivers are never trusted; and a hook
// or an outer git command may have set GIT_DIR and friends, which would win
// over -C.
package gitenv

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// locating are the variables that choose a repository, its work tree or
// its index.
var locating = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_COMMON_DIR": true,
	"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
	"GIT_NAMESPACE": true, "GIT_PREFIX": true,
}

// running are the variables that make git start another program on its
// own: an external diff, a pager. GIT_PAGER is set back to cat by Command.
var running = map[string]bool{
	"GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true, "PAGER": true,
}

// Env is this process's environment without the locating variables, plus
// extra. It is also the base of agents' environments, so it keeps
// everything else.
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

// GitEnv is Env for a git child process: no external diff, no pager.
func GitEnv(extra ...string) []string {
	out := slices.DeleteFunc(Env(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return running[k]
	})
	return append(append(out, "GIT_PAGER=cat"), extra...)
}

// safe come before every subcommand: no hook (a path under /dev/null is
// never a file), no fsmonitor program, no pager.
var safe = []string{
	"--no-pager",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
}

// patching are the subcommands that can print a patch, and so would run
// an external diff or a textconv filter named by the repository's config.
var patching = map[string]bool{
	"diff": true, "diff-tree": true, "diff-index": true, "diff-files": true,
	"log": true, "show": true, "range-diff": true, "format-patch": true,
}

// Args is git's argument list for args with the safe options in front, and
// --no-ext-diff --no-textconv after a subcommand that prints patches. args
// may start with the caller's own -C/-c pairs; the subcommand follows them.
func Args(args ...string) []string {
	out := append(slices.Clone(safe), args...)
	i := len(safe)
	for i+1 < len(out) && (out[i] == "-c" || out[i] == "-C") {
		i += 2
	}
	if i < len(out) && patching[out[i]] {
		out = slices.Insert(out, i+1, "--no-ext-diff", "--no-textconv")
	}
	return out
}

// Command is git args run in dir (git -C dir) with the safe options and
// GitEnv; callers add their own environment to cmd.Env, which wins.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", Args(append([]string{"-C", dir}, args...)...)...)
	cmd.Env = GitEnv()
	return cmd
}
