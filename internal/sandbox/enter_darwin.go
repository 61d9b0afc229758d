package sandbox

import "os/exec"

// Start starts cmd alone in a session with no terminal. Darwin has no
// Landlock, no cgroups and no capabilities to drop: a Policy is refused
// (Status never offers one here), and without one cmd
// runs uncontained, as on a Linux kernel without Landlock. A Group cannot
// exist (NewGroup fails), so there is nothing to join.
func (s Spawn) Start(cmd *exec.Cmd) (release func(), err error) {
	if s.Policy != nil {
		return nil, errNoLandlock
	}
	alone(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() {}, nil
}
