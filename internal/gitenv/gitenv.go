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
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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
// names for it (Pin). It is Run's base; the product runs git through Run,
// which bounds it, and only the files shape's commandKept names build on
// Command themselves.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", Args(append([]string{"-C", dir}, args...)...)...)
	cmd.Env = GitEnv(Pin(dir)...)
	return cmd
}

// Pin is GIT_DIR and GIT_WORK_TREE for a git run in dir when dir lies in a
// linked worktree (its .git is a file). An agent writes its worktree, that
// .git file included, and a git dir it points at would bring the agent's
// config — filters, drivers, helpers that run programs — into an
// operator's process. So the link is read from the repository's side:
// the worktree lies inside the repository that made it (under var/), and
// one of that repository's worktrees/*/gitdir files names it. A worktree
// that no admin folder names gets a GIT_DIR that does not exist, and git
// refuses it; one outside any repository's folder is left to git.
func Pin(dir string) []string {
	root := linkedRoot(dir)
	if root == "" {
		return nil
	}
	common := enclosingGitDir(filepath.Dir(root))
	if common == "" {
		return nil
	}
	admin := adminFor(common, root)
	if admin == "" {
		admin = filepath.Join(root, ".git-not-a-registered-worktree")
	}
	return []string{"GIT_DIR=" + admin, "GIT_WORK_TREE=" + root}
}

// WorktreeAdmin is the admin folder (common/worktrees/<name>) the
// repository around the linked worktree wt keeps for it, found as Pin
// finds it.
func WorktreeAdmin(wt string) (string, error) {
	wt = filepath.Clean(wt)
	if linkedRoot(wt) != wt {
		return "", fmt.Errorf("%s is not a linked git worktree", wt)
	}
	common := enclosingGitDir(filepath.Dir(wt))
	if common == "" {
		return "", fmt.Errorf("worktree %s: no repository around it", wt)
	}
	admin := adminFor(common, wt)
	if admin == "" {
		return "", fmt.Errorf("worktree %s: none of %s names it", wt, filepath.Join(common, "worktrees"))
	}
	return admin, nil
}

// adminFor is the folder under common/worktrees/ whose gitdir file names
// root/.git, "" when none does. The worktree's own link is tried first,
// believed only when the folder it names points back; then every admin
// folder is read.
func adminFor(common, root string) string {
	// git records real paths: a project reached through a symlink is
	// compared by where it really is.
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if real, err := filepath.EvalSymlinks(common); err == nil {
		common = real
	}
	link := filepath.Join(root, ".git")
	pointsBack := func(admin string) bool {
		back, err := readSmall(filepath.Join(admin, "gitdir"))
		return err == nil && filepath.Clean(strings.TrimSpace(back)) == link
	}
	admins := filepath.Join(common, "worktrees")
	if data, err := readSmall(link); err == nil {
		if p, ok := strings.CutPrefix(strings.TrimSpace(data), "gitdir: "); ok {
			if !filepath.IsAbs(p) {
				p = filepath.Join(root, p)
			}
			if p = filepath.Clean(p); filepath.Dir(p) == admins && pointsBack(p) {
				return p
			}
		}
	}
	entries, _ := os.ReadDir(admins)
	for _, e := range entries {
		if admin := filepath.Join(admins, e.Name()); pointsBack(admin) {
			return admin
		}
	}
	return ""
}

// linkedRoot is the top of the linked worktree dir lies in, "" when it
// lies in a main checkout or none.
func linkedRoot(dir string) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if fi.Mode().IsRegular() {
				return d
			}
			return ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// enclosingGitDir is the .git folder of the nearest checkout at or above
// dir, "" when there is none.
func enclosingGitDir(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil && fi.IsDir() {
			return filepath.Join(d, ".git")
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// readSmall reads a small file, never through a symlink.
func readSmall(p string) (string, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	return string(b), err
}
