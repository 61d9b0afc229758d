// Package gitenv is how fleetwatch runs git: in a named repository, with
// nothing from that repository's config or from the environment able to run
// code in the operator's process. Agents can write the shared git dir, so
// its hooks, fsmonitor, pager and diff drivers are never trusted; and a hook
// or an outer git command may have set GIT_DIR and friends, which would win
// over -C. Run is the one way the product runs git.
package gitenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/fleetwatch/fleetwatch/internal/agentfile"
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
		if _, secret := withheld.Load(k); !locating[k] && !secret {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// withheld are variables no child process gets: secrets this process
// keeps for itself (a forge's token).
var withheld sync.Map

// Withhold keeps the variable name out of every environment Env makes
// from now on; "" is ignored.
func Withhold(name string) {
	if name != "" {
		withheld.Store(name, true)
	}
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
	if i := len(safe) + subIndex(args); i < len(out) && patching[out[i]] {
		out = slices.Insert(out, i+1, "--no-ext-diff", "--no-textconv")
	}
	return out
}

// subIndex is where the subcommand is in args: after any -c/-C pairs.
func subIndex(args []string) int {
	i := 0
	for i+1 < len(args) && (args[i] == "-c" || args[i] == "-C") {
		i += 2
	}
	return i
}

// Command is git args run in dir (git -C dir) with the safe options and
// GitEnv; callers add their own environment to cmd.Env, which wins. In a
// linked worktree, git is pinned to the admin folder the repository itself
// names for it and confined (Pin). It is Run's base; the product runs git
// through Run, which bounds it, and only the files shape's commandKept
// names build on Command themselves.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	args = append([]string{"-C", dir}, args...)
	pin := Pin(dir)
	if pin != nil {
		args = confine(args)
	}
	cmd := exec.CommandContext(ctx, "git", Args(args...)...)
	cmd.Env = GitEnv(pin...)
	return cmd
}

// confined come before every subcommand run in a worktree, whose files an
// agent writes: no submodule is recursed into or checked for changes (git
// would run a git of its own there, which finds whatever repository the
// agent put in that folder), and no credential helper is asked.
var confined = []string{
	"-c", "submodule.recurse=false",
	"-c", "diff.ignoreSubmodules=dirty",
	"-c", "credential.helper=",
	"-c", "core.sshCommand=false",
}

// comparing are the subcommands that look at submodules' work trees unless
// told not to; a worktree's .gitmodules (the agent's) can say so per
// submodule, over diff.ignoreSubmodules, so they are told on the command
// line.
var comparing = map[string]bool{
	"status": true, "diff": true, "diff-index": true, "diff-files": true,
}

// confine is args with the confined options in front and
// --ignore-submodules=dirty after a subcommand that compares work trees.
func confine(args []string) []string {
	out := append(slices.Clone(confined), args...)
	if i := len(confined) + subIndex(args); i < len(out) && comparing[out[i]] {
		out = slices.Insert(out, i+1, "--ignore-submodules=dirty")
	}
	return out
}

// Pin is the environment for a git run in dir when dir lies in a linked
// worktree of a repository around it, nil otherwise. An agent writes its
// worktree, whatever is at its .git included: a link to a git dir of its
// making, a git folder of its own, a symlink or nothing. Any of them,
// believed, would bring the agent's config (filters, drivers, helpers that
// run programs) into an operator's process. So the worktree is found from
// the repository's side: the worktree lies inside the repository that made
// it (under var/), and one of that repository's worktrees/*/gitdir files
// names it; the outermost repository that names a folder at or above dir
// wins, since a repository inside a worktree is its agent's. git then runs
// with GIT_DIR and GIT_WORK_TREE named (no discovery), and with neither
// the system's nor the user's config (GIT_CONFIG_NOSYSTEM,
// GIT_CONFIG_GLOBAL): what is left is the project's own config, which no
// agent writes. A folder whose nearest .git is not a folder, or lies in a
// repository's var/, inside a repository that names none of its folders,
// gets a GIT_DIR that does not exist, and git refuses it; a main checkout,
// or a worktree outside any repository's folder, is left to git.
//
// Cost in a main checkout's top folder, where most git runs: one lstat a
// folder above it, and nothing read.
func Pin(dir string) []string {
	l := locate(dir)
	switch {
	case l.admin != "":
		return pinned(l.admin, l.wt)
	case l.stray != "":
		return pinned(filepath.Join(l.stray, ".git-not-a-registered-worktree"), l.stray)
	}
	return nil
}

func pinned(gitDir, workTree string) []string {
	return []string{"GIT_DIR=" + gitDir, "GIT_WORK_TREE=" + workTree, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
}

// WorktreeAdmin is the admin folder (common/worktrees/<name>) the
// repository around the linked worktree wt keeps for it, found as Pin
// finds it, whatever is at wt/.git.
func WorktreeAdmin(wt string) (string, error) {
	l := locate(wt)
	switch {
	case l.admin != "" && l.wt == realPath(wt):
		return l.admin, nil
	case len(l.repos) == 0:
		return "", fmt.Errorf("worktree %s: no repository around it", wt)
	}
	return "", fmt.Errorf("worktree %s: none of %s names it", wt, filepath.Join(l.repos[0], ".git", "worktrees"))
}

// location is where a folder lies, as Pin sees it.
type location struct {
	wt, admin string   // the registered worktree around it and its admin folder
	stray     string   // else the folder of the nearest .git that is not a folder, inside a repository
	repos     []string // the repositories above it, outermost first
}

// locate walks up from dir. Only repositories strictly above dir are asked
// for their worktrees: dir's own .git folder, if any, is what is in doubt.
func locate(dir string) location {
	d, err := filepath.Abs(dir)
	if err != nil {
		return location{}
	}
	near, nearIsDir, repos := walk(d)
	if len(repos) > 0 {
		// git records real paths: a project reached through a symlink is
		// compared by where it really is.
		if real := realPath(d); real != d {
			d = real
			near, nearIsDir, repos = walk(d)
		}
	}
	l := location{repos: repos}
	for _, r := range repos {
		if l.wt, l.admin = registered(filepath.Join(r, ".git"), d, r); l.admin != "" {
			return l
		}
	}
	if near != "" && (!nearIsDir || underVar(near, repos)) && len(repos) > 0 {
		l.stray = near
	}
	return l
}

// underVar reports whether dir lies in the var/ folder of one of repos:
// fleetwatch's own, where it keeps worktrees and agents' stores, so a
// repository there that no record names is an agent's (a worktree whose
// .git it deleted, pruned since, then made a folder).
func underVar(dir string, repos []string) bool {
	for _, r := range repos {
		if strings.HasPrefix(dir, filepath.Join(r, "var")+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// walk finds the nearest folder at or above d holding a .git (and whether
// that .git is a folder), and the folders strictly above d whose .git is a
// folder, outermost first.
func walk(d string) (near string, nearIsDir bool, repos []string) {
	for a := d; ; a = filepath.Dir(a) {
		if fi, err := os.Lstat(filepath.Join(a, ".git")); err == nil {
			if near == "" {
				near, nearIsDir = a, fi.IsDir()
			}
			if a != d && fi.IsDir() {
				repos = append([]string{a}, repos...)
			}
		}
		if filepath.Dir(a) == a {
			return near, nearIsDir, repos
		}
	}
}

// registered is the worktree of common (the repository at top) that holds
// dir, and its admin folder: the one whose gitdir file names <wt>/.git
// for a folder wt at or above dir and below top. A .git file at such a
// folder that names its own admin folder is tried first; then every admin
// folder is read.
func registered(common, dir, top string) (wt, admin string) {
	admins := filepath.Join(realPath(common), "worktrees")
	var candidates []string
	for a := dir; a != top && strings.HasPrefix(a, top+string(filepath.Separator)); a = filepath.Dir(a) {
		candidates = append(candidates, a)
	}
	for _, c := range candidates {
		if p := gitdirOf(c); p != "" && filepath.Dir(p) == admins && adminNames(p) == c {
			return c, p
		}
	}
	entries, _ := os.ReadDir(admins)
	for _, c := range candidates {
		for _, e := range entries {
			if admin := filepath.Join(admins, e.Name()); adminNames(admin) == c {
				return c, admin
			}
		}
	}
	return "", ""
}

// gitdirOf is the admin folder the .git file in folder c names, cleaned
// and absolute; "" when c has no such file.
func gitdirOf(c string) string {
	data, err := ReadFile(filepath.Join(c, ".git"), 4096)
	if err != nil {
		return ""
	}
	p, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(c, p)
	}
	return filepath.Clean(p)
}

// adminNames is the worktree whose .git the gitdir file of admin names;
// "" when it names none.
func adminNames(admin string) string {
	back, err := ReadFile(filepath.Join(admin, "gitdir"), 4096)
	if err != nil {
		return ""
	}
	p := filepath.Clean(strings.TrimSpace(string(back)))
	if !filepath.IsAbs(p) {
		p = filepath.Join(admin, p)
	}
	if filepath.Base(p) != ".git" {
		return ""
	}
	return filepath.Dir(p)
}

// realPath is p with its symlinks resolved, p itself when that fails.
func realPath(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

// ErrNotRegular is a file an agent could write that is not a regular
// file: a FIFO would block its reader, a device would never end.
var ErrNotRegular = agentfile.ErrNotRegular

// ReadFile reads a file an agent may have written, as agentfile.Read
// does: never through a symlink, never blocking on a FIFO or a device,
// and at most limit bytes; a larger file is refused whole.
func ReadFile(p string, limit int64) ([]byte, error) { return agentfile.Read(p, limit) }
