package landing

import (
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"fleetwatch/internal/config"
	"fleetwatch/internal/sandbox"
)

// startContained starts cmd as fleetwatch.yaml's `sandbox:` says: a check
// runs the candidate's code and a reviewer is an agent, so each runs in a
// Landlock domain that writes only write and a temp dir of its own, in a
// cgroup of its own where there can be one (made here; done kills what is
// left in the cgroup and removes both). cmd.SysProcAttr must be set. release, once cmd has exited, lets the thread
// that started it go.
func startContained(project string, cmd *exec.Cmd, write ...string) (release, done func(), err error) {
	s, err := config.Load(project)
	if err != nil {
		return nil, nil, err
	}
	contained, _, err := sandbox.Status(s.Sandbox)
	if err != nil {
		return nil, nil, err
	}
	tmp, err := os.MkdirTemp("", "fw-")
	if err != nil {
		return nil, nil, err
	}
	// A cgroup of its own, where there can be one: a daemon it starts ends
	// with it, however it left its process group.
	sandbox.SweepGroups(sandbox.GroupName(project, "fw-"), time.Minute)
	group, _ := sandbox.NewGroup(sandbox.GroupName(project, filepath.Base(tmp)), sandbox.DefaultLimits())
	done = func() {
		group.Close()
		os.RemoveAll(tmp)
	}
	cmd.Env = append(cmd.Env, sandbox.PrivateEnv(tmp, filepath.Join(tmp, ".cache"))...)
	spawn := sandbox.Spawn{Group: group}
	if contained {
		spawn.Policy = &sandbox.Policy{Write: append(write, tmp), OpenNetwork: true}
	}
	release, err = spawn.Start(cmd)
	if err != nil {
		done()
		return nil, nil, err
	}
	return release, done, nil
}
