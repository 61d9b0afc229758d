package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The gate (approve, queue, land, send back, a proposal's approve or
// reject) is a person's. Inside the sandbox an agent cannot write what the
// gate writes at all; AgentRun is the second line, for hosts without
// Landlock and `sandbox: off`: it recognises a process that descends from
// an agent or from the driver that started one, by marks the process
// cannot take off itself — what its ancestors were started with — so
// `env -u FLEET_AGENT_ID` does not pass.

// agentVars mark an agent's environment; the driver sets them when it
// starts one.
var agentVars = []string{"FLEET_AGENT_ID", "FLEET_SOCKET", "FLEET_LEASE_TOKEN", CheckEnv}

// CheckEnv marks a check's environment: a check runs the candidate's code.
const CheckEnv = "FLEET_CHECK"

// maxAncestors bounds the walk up the process tree.
const maxAncestors = 256

// AgentRun says why this process is an agent's (or a check's) doing, or ""
// when nothing marks it so. First what it cannot shed: a fleetwatch
// cgroup (only a process that may write /sys/fs/cgroup leaves one), or a
// session an agent leads (every agent starts one; a process leaves it
// only by starting its own, which its ancestors then give away). Then
// one of the agent variables in its own environment, or in the
// environment an ancestor was started with, or a driver (`fleetwatch
// work-once --run`) among its ancestors, which adopts the orphans an
// agent leaves.
func AgentRun() string {
	if g := agentGroup(); g != "" {
		return fmt.Sprintf("it runs in %s, an agent's or a check's cgroup", g)
	}
	for _, k := range agentVars {
		if v := os.Getenv(k); v != "" {
			return fmt.Sprintf("%s is set, so this is an agent run", k)
		}
	}
	if sid, err := unix.Getsid(0); err == nil && sid > 1 && sid != os.Getpid() {
		if why := agentMark(sid); why != "" {
			return "its session's leader: " + why
		}
	}
	pid := os.Getppid()
	for n := 0; pid > 1 && n < maxAncestors; n++ {
		if why := agentMark(pid); why != "" {
			return why
		}
		pid = parentOf(pid)
	}
	return ""
}

// agentGroup is the fleetwatch cgroup this process runs in, in any
// hierarchy, "" when none.
func agentGroup() string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) < 3 {
			continue
		}
		for _, dir := range strings.Split(parts[2], "/") {
			if strings.HasPrefix(dir, groupPrefix) {
				return dir
			}
		}
	}
	return ""
}

// agentMark reads what pid was started with: an agent's variables, or a
// driver's command line. macOS has no /proc: there it finds nothing, and
// only this process's own environment marks an agent run.
func agentMark(pid int) string {
	dir := "/proc/" + strconv.Itoa(pid)
	if env, err := os.ReadFile(dir + "/environ"); err == nil {
		for _, kv := range bytes.Split(env, []byte{0}) {
			for _, k := range agentVars {
				if bytes.HasPrefix(kv, []byte(k+"=")) && len(kv) > len(k)+1 {
					return fmt.Sprintf("process %d, an ancestor, was started as an agent (%s)", pid, k)
				}
			}
		}
	}
	if cmd, err := os.ReadFile(dir + "/cmdline"); err == nil {
		args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
		if isDriver(args) {
			return fmt.Sprintf("process %d, an ancestor, is a driver that runs agents (%s)", pid, strings.Join(args[1:], " "))
		}
	}
	return ""
}

// isDriver reports whether a command line is `fleetwatch work-once --run`.
func isDriver(args []string) bool {
	var workOnce, run bool
	for _, a := range args[min(1, len(args)):] {
		switch {
		case a == "work-once":
			workOnce = true
		case a == "--run" || a == "-run" || strings.HasPrefix(a, "--run="):
			run = true
		}
	}
	return workOnce && run
}

// ParentOf is pid's parent process, 0 when the system cannot tell.
func ParentOf(pid int) int { return parentOf(pid) }
