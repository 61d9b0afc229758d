package contain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/workers/egress"
)

// SandboxDir holds each agent's own git store and caches, under the
// project: var/fleet/sandbox/<agent>/.
const SandboxDir = "var/fleet/sandbox"

// Box is one run's containment: a private folder for the driver's socket
// and the agent's temp dir (removed when the run ends), the agent's own
// git store when it works in a worktree, its cgroup, and the policy and
// environment it starts with.
type Box struct {
	Group    *sandbox.Group // the agent's cgroup, when cgroup v2 lets us make one
	Run      string         // private: sock and tmp/
	Tmp      string
	Out      string // where a plan turn writes its proposal
	Git      *GitBox
	Broker   *Broker
	Egress   *egress.Proxy // the run's way out, when its network is contained
	Env      []string
	Policy   sandbox.Policy
	Proposal string // the agent's copy of job.Proposal, when it writes one
	// Writes follows the writes in the worktree from before the agent
	// starts, so none it makes at once is missed (the scope scanner's).
	Writes *WriteWatch
}

// ConnectTo lets the agent connect to the port of a driver's loopback
// URL (its metering proxy).
func (b *Box) ConnectTo(rawURL string) {
	if port, ok := egress.PortOf(rawURL); ok && !b.Policy.OpenNetwork {
		b.Policy.Connect = append(b.Policy.Connect, port)
	}
}

// Start starts cmd alone in a session, with no capability, in the box's
// cgroup when it has one and inside its domain when contained. release,
// once cmd has exited, lets the thread that started it go.
func (b *Box) Start(contained bool, cmd *exec.Cmd) (release func(), err error) {
	s := sandbox.Spawn{Group: b.Group}
	if contained {
		s.Policy = &b.Policy
	}
	return s.Start(cmd)
}

// Close gives back what the box holds: its broker, write watch, egress
// proxy, cgroup and private folder.
func (b *Box) Close() {
	if b == nil {
		return
	}
	b.Broker.close()
	if b.Egress != nil {
		b.Egress.Close()
	}
	b.Writes.close()
	b.Group.Close()
	os.RemoveAll(b.Run)
}

// CheckedOutIn reports whether the worktree whose admin folder is admin
// (the project's, never the agent's to write) has ref checked out: no
// hand-off has taken the branch to another worktree.
func CheckedOutIn(admin, ref string) bool {
	data, err := gitenv.ReadFile(filepath.Join(admin, "HEAD"), 4096)
	return err == nil && strings.TrimSpace(string(data)) == "ref: "+ref
}
