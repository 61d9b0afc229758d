package landing

import (
	"os"
	"os/exec"
	"path/filepath"

	"fleetwatch/internal/config"
	"fleetwatch/internal/sandbox"
)

// startContained starts cmd as fleetwatch.yaml's `sandbox:` says: a check
// runs the candidate's code and a reviewer is an agent, so each runs in a
// Landlock domain that writes only write and a temp dir of its own (made
// here; done removes it). release, once cmd has exited, lets the thread
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
	done = func() { os.RemoveAll(tmp) }
	cmd.Env = append(cmd.Env, sandbox.PrivateEnv(tmp, filepath.Join(tmp, ".cache"))...)
	if !contained {
		release = func() {}
		err = cmd.Start()
	} else {
		release, err = sandbox.Policy{Write: append(write, tmp)}.Start(cmd)
	}
	if err != nil {
		done()
		return nil, nil, err
	}
	return release, done, nil
}
