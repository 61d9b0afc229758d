package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// handledFS is every filesystem right up to ABI 8. Connecting to a Unix
// socket by path (ABI 9's "resolve unix") stays allowed: a contained agent
// reaches its driver over one.
const handledFS = landlock.AccessFSSet(llsyscall.AccessFSResolveUnix - 1)

// readExec is what the whole filesystem grants: reading and running.
const readExec = landlock.AccessFSSet(llsyscall.AccessFSExecute | llsyscall.AccessFSReadFile | llsyscall.AccessFSReadDir)

// enter restricts this process (every thread) to p for good. Signals to
// processes outside the domain are refused too (ABI 6), so an agent cannot
// stop or kill the driver that holds its lease. Best effort by the
// kernel's ABI, never below minABI.
func (p Policy) enter() error {
	if _, err := ABI(); err != nil {
		return err
	}
	var dirs, files []string
	for _, w := range p.Write {
		if !filepath.IsAbs(w) {
			return fmt.Errorf("writable path %q is not absolute", w)
		}
		fi, err := os.Stat(w)
		if err != nil {
			return fmt.Errorf("writable path %s: %v", w, err)
		}
		if fi.IsDir() {
			dirs = append(dirs, w)
		} else {
			files = append(files, w)
		}
	}
	rules := []landlock.Rule{
		landlock.PathAccess(readExec, "/"),
		landlock.RWDirs(deviceDirs...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
	}
	if len(dirs) > 0 {
		rules = append(rules, landlock.RWDirs(dirs...).WithRefer())
	}
	if len(files) > 0 {
		rules = append(rules, landlock.RWFiles(files...))
	}
	// One ruleset for paths and scopes: every Landlock layer denies
	// "refer" unless it grants it, so a second, scopes-only layer would
	// turn every rename across folders into EXDEV. The network is not
	// handled: agents reach their models and their ports as before.
	cfg := landlock.Config{HandledAccessFS: handledFS, Scoped: llsyscall.ScopeSignal}.BestEffort()
	if err := cfg.Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %v", err)
	}
	return nil
}

// execve replaces this process with argv, found on PATH as a shell would.
func execve(argv []string) error {
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(prog, argv, os.Environ())
}
