// Package sandbox contains the processes fleetwatch starts on an agent's
// behalf (build, plan and review turns, and every check) in a Linux Landlock
// domain: they read everything, but write only the paths their Policy
// names. The domain is entered in a small re-executed helper of fleetwatch
// itself (`fleetwatch __contain`) just before it execs the agent's argv, so
// the process that starts agents stays unconfined, and nothing the agent
// does afterwards — not even as root — can leave the domain.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Mode is fleetwatch.yaml's `sandbox:` setting.
type Mode string

const (
	// Auto contains agents where the kernel has Landlock, and says once,
	// wherever an operator looks, that they are not contained where it
	// has not.
	Auto Mode = "auto"
	// Require starts no agent and no check without Landlock.
	Require Mode = "require"
	// Off starts agents unconfined, as the operator's user.
	Off Mode = "off"
)

// Modes are the values `sandbox:` accepts, the default first.
var Modes = []Mode{Auto, Require, Off}

// ParseMode reads a `sandbox:` value; "" is Auto.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return Auto, nil
	}
	if m := Mode(s); slices.Contains(Modes, m) {
		return m, nil
	}
	return "", fmt.Errorf("sandbox must be auto, require or off, not %q", s)
}

// minABI is the oldest Landlock ABI fleetwatch contains agents with: ABI 2
// brings "refer", without which git cannot rename a lock file into place
// in a writable folder.
const minABI = 2

var probe = sync.OnceValues(func() (int, error) {
	abi, err := llsyscall.LandlockGetABIVersion()
	if err != nil {
		return 0, fmt.Errorf("the kernel has no Landlock (%v)", err)
	}
	if abi < minABI {
		return abi, fmt.Errorf("the kernel's Landlock ABI %d is older than %d", abi, minABI)
	}
	return abi, nil
})

// ABI is the kernel's Landlock ABI version, or why agents cannot be
// contained on this host.
func ABI() (int, error) { return probe() }

// NotContained is the words every face uses when agents run unconfined.
const NotContained = "agents are not contained"

// Status says what mode m means on this host: whether agents will be
// contained, and the one line that says how (or why not). err is set only
// for Require on a host without Landlock: nothing may start.
func Status(m Mode) (contained bool, line string, err error) {
	if m == Off {
		return false, NotContained + " (sandbox: off)", nil
	}
	abi, perr := ABI()
	if perr != nil {
		if m == Require {
			return false, "", fmt.Errorf("sandbox: require, but %v", perr)
		}
		return false, fmt.Sprintf("%s: %v", NotContained, perr), nil
	}
	return true, fmt.Sprintf("agents are contained (Landlock ABI %d)", abi), nil
}

// Policy is what one contained process may write. Reads and execution
// stay open everywhere.
type Policy struct {
	// Write are folders the process may change anything under (its
	// worktree, its temp dir), and single files it may write (devices).
	Write []string
}

// HelperArg is the first argument that turns fleetwatch into the helper.
const HelperArg = "__contain"

// Executable is the fleetwatch binary that serves as the helper; tests
// that start agents from a test binary point it at one that calls Main.
var Executable = func() (string, error) { return os.Executable() }

// Wrap returns the argv that starts argv contained by p, through the
// helper, in dir. The caller has already decided, with Status, to
// contain. The program is found here, as exec would find it, so one that
// cannot start fails now, not inside the helper.
func (p Policy) Wrap(dir string, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	prog, err := findProgram(dir, argv[0])
	if err != nil {
		return nil, err
	}
	argv = append([]string{prog}, argv[1:]...)
	self, err := Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: cannot find fleetwatch itself: %v", err)
	}
	out := []string{self, HelperArg}
	for _, w := range p.Write {
		out = append(out, "--write", w)
	}
	out = append(out, "--")
	return append(out, argv...), nil
}

// findProgram resolves name as exec.Command in dir would: a relative path
// with a slash from dir, a bare name on PATH; it must be an executable
// file.
func findProgram(dir, name string) (string, error) {
	if !strings.Contains(name, "/") {
		return exec.LookPath(name)
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	fi, err := os.Stat(name)
	switch {
	case err != nil:
		return "", err
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("%s: not an executable file", name)
	}
	return name, nil
}

// devices are the files any program expects to write: the bit buckets,
// randomness, terminals. Missing ones are skipped.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// deviceDirs are folders of devices and scratch space shared by every
// process of the host: nothing fleetwatch trusts lives there.
var deviceDirs = []string{"/dev/pts", "/dev/shm"}

// PrivateEnv is what a contained process's environment gets so that the
// tools it runs write into its own temp dir and caches instead of the
// user's shared ones (a poisoned Go build cache would run the agent's code in the
// operator's next build).
func PrivateEnv(tmp, cache string) []string {
	return []string{
		"TMPDIR=" + tmp,
		"GOTMPDIR=" + tmp,
		"GOCACHE=" + filepath.Join(cache, "go-build"),
		"XDG_CACHE_HOME=" + cache,
	}
}

// parseHelperArgs splits the helper's arguments into the writable paths
// and the command.
func parseHelperArgs(args []string) (Policy, []string, error) {
	var p Policy
	for len(args) > 0 {
		switch args[0] {
		case "--write":
			if len(args) < 2 || args[1] == "" {
				return p, nil, errors.New("--write needs a path")
			}
			p.Write = append(p.Write, args[1])
			args = args[2:]
		case "--":
			if len(args) < 2 {
				return p, nil, errors.New("no command after --")
			}
			return p, args[1:], nil
		default:
			return p, nil, fmt.Errorf("unknown argument %q", args[0])
		}
	}
	return p, nil, errors.New("no command after --")
}

// Main is the helper: when os.Args[1] is HelperArg, it enters the domain
// its arguments describe and execs the command, never returning; it
// returns at once otherwise. Call it first thing in main (and in TestMain
// of tests whose drivers run inside the test binary).
func Main() {
	if len(os.Args) < 2 || os.Args[1] != HelperArg {
		return
	}
	p, argv, err := parseHelperArgs(os.Args[2:])
	if err == nil {
		err = p.enter()
	}
	if err == nil {
		err = execve(argv)
	}
	fmt.Fprintf(os.Stderr, "fleetwatch: contain: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
	os.Exit(126)
}
