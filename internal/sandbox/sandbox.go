// Package sandbox contains the processes fleetwatch starts on an agent's
// behalf (build, plan and review turns, and every check) in a Linux Landlock
// domain: they read everything, but write only the paths their Policy
// names, and cannot signal a process outside it. The domain is entered by
// a throwaway OS thread of the starting process just before it forks the
// agent (Landlock domains belong to threads, and a child inherits its
// parent thread's), so the process that starts agents stays unconfined,
// and nothing the agent does afterwards — not even as root — can leave
// the domain.
package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
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

var probe = sync.OnceValues(landlockABI)

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
	// OpenNetwork leaves TCP unhandled: the process connects anywhere.
	// Otherwise (Landlock ABI 4+) it connects over TCP only to Connect's
	// ports: the driver's proxies and its own port.
	OpenNetwork bool
	Connect     []uint16
}

// devices are the files any program expects to write: the bit buckets
// and randomness. No terminal is among them: an agent shares none with a
// person. Missing ones are skipped.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// deviceDirs are folders of scratch space shared by every process of the
// host: nothing fleetwatch trusts lives there.
var deviceDirs = []string{"/dev/shm"}

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
