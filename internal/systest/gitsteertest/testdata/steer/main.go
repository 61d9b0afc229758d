// Command steer stands in for a coding agent that tries to steer the
// driver's own git through what it can write: its worktree's .git, its
// git store, the config it reads there. Its arguments are the fleetwatch
// binary and one attack:
//
//   - gitdir: commits honestly, then replaces its worktree's .git file
//     with a git folder of its own whose config names a clean filter (and a
//     .gitattributes naming that filter) that writes var/steered under the
//     project and moves refs/heads/dev: run by the driver, unconfined, both
//     would succeed; it waits for the driver's scope scans before it hands
//     its plan in;
//   - fifo: commits honestly, then makes its branch ref in its store a FIFO
//     and hands its plan in, then waits to be stopped;
//   - remote: prints what its store's config says of the project's remote
//     and credential helper ("remote-url: none" when nothing).
//
// Each prints what it did, one line a step, into the driver's log.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	fw, attack := os.Args[1], os.Args[2]
	root := os.Getenv("FLEET_ROOT")
	wt := os.Getenv("FLEET_WORKTREE")

	switch attack {
	case "gitdir":
		honest(wt)
		plantGitDir(root, wt)
		must(run(wt, nil, fw, "complete", "--to", "review-needed", os.Getenv("FLEET_PLAN")))
		fmt.Println("handed in")
	case "fifo":
		honest(wt)
		ref, err := output(wt, nil, "git", "symbolic-ref", "HEAD")
		must(err)
		p := filepath.Join(os.Getenv("GIT_DIR"), filepath.FromSlash(ref))
		must(os.Remove(p))
		must(syscall.Mkfifo(p, 0o644))
		fmt.Println("fifo planted at", ref)
		err = run(wt, nil, fw, "complete", "--to", "review-needed", os.Getenv("FLEET_PLAN"))
		fmt.Println("hand-in answered:", err)
		time.Sleep(30 * time.Second)
	case "remote":
		for _, key := range []string{"remote.origin.url", "credential.helper"} {
			out, _ := output(wt, nil, "git", "config", "--get", key)
			fmt.Printf("%s: %s\n", key, or(out, "none"))
		}
		all, _ := output(wt, nil, "git", "config", "--list")
		fmt.Printf("store config:\n%s\n", all)
		honest(wt)
		must(run(wt, nil, fw, "complete", "--to", "review-needed", os.Getenv("FLEET_PLAN")))
		fmt.Println("handed in")
	default:
		must(fmt.Errorf("no attack %q", attack))
	}
}

// honest commits one file on the agent's branch, in its own store.
func honest(wt string) {
	must(os.WriteFile(filepath.Join(wt, "feature.txt"), []byte("honest work\n"), 0o644))
	must(run(wt, nil, "git", "add", "feature.txt"))
	must(run(wt, nil, "git", "-c", "user.name=agent", "-c", "user.email=agent@example.com", "commit", "-q", "-m", "honest work"))
	fmt.Println("honest work committed")
}

// plantGitDir makes wt/.git a repository of the agent's own, whose index
// holds a file the driver's git must look at again through the filter.
func plantGitDir(root, wt string) {
	env := without("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE")
	must(os.Remove(filepath.Join(wt, ".git")))
	must(run(wt, env, "git", "init", "-q"))
	filter := fmt.Sprintf("echo steered >>'%s'; git --git-dir='%s' update-ref refs/heads/dev refs/heads/feature/x; cat",
		filepath.Join(root, "var", "steered"), filepath.Join(root, ".git"))
	must(run(wt, env, "git", "config", "filter.evil.clean", filter))
	must(run(wt, env, "git", "config", "filter.evil.smudge", filter))
	must(os.WriteFile(filepath.Join(wt, ".gitattributes"), []byte("* filter=evil\n"), 0o644))
	must(os.WriteFile(filepath.Join(wt, "bait.txt"), []byte("bait\n"), 0o644))
	must(run(wt, env, "git", "add", "bait.txt", ".gitattributes"))
	must(run(wt, env, "git", "-c", "user.name=agent", "-c", "user.email=agent@example.com", "commit", "-q", "-m", "bait"))
	// Another size: git must read it again, through the filter.
	must(os.WriteFile(filepath.Join(wt, "bait.txt"), []byte("bait, changed\n"), 0o644))
	fmt.Println("git folder planted")
	// The driver's scope scan looks at the worktree every second.
	time.Sleep(2500 * time.Millisecond)
}

func run(dir string, env []string, name string, args ...string) error {
	_, err := output(dir, env, name, args...)
	return err
}

func output(dir string, env []string, name string, args ...string) (string, error) {
	c := exec.Command(name, args...)
	c.Dir = dir
	c.Env = env
	out, err := c.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %v: %v: %s", name, args, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func without(keys ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, x := range keys {
			drop = drop || k == x
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "steer:", err)
		os.Exit(3)
	}
}
