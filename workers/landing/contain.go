package landing

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/workers/egress"
	"github.com/fleetwatch/fleetwatch/workers/landing/gocache"
)

// grant is what a contained check or reviewer may do beyond reading:
// the paths it writes (a temp dir of its own besides), the driver's ports
// it connects to besides the egress proxy (its own port block, its
// metering proxy), and where the egress proxy's refusals are logged.
type grant struct {
	write   []string
	connect []int
	hosts   []string // reached through the egress proxy besides egress:'s (an unmetered reviewer's model)
	log     io.Writer
	// goCache is what its go command is served (checkcache.go); nil keeps
	// the empty private GOCACHE only. checkCache serves a check's: the
	// layers fleetwatch.yaml's checks_cache: names.
	goCache    *goCache
	checkCache bool
	// caches are a check's `cache:` folders, copied privately.
	caches map[string]string
	// mustContain refuses to start it uncontained (a trusted build, whose
	// write layer the trusted one is made of).
	mustContain bool
}

// startContained starts cmd as fleetwatch.yaml's `sandbox:` says: a check
// runs the candidate's code and a reviewer is an agent, so each runs in a
// Landlock domain that writes only g's paths and a temp dir of its own, and
// connects over TCP only to g's ports and an egress proxy of its own that
// lets through the hosts `egress:` allows; in a cgroup of its own where
// there can be one (made here; done kills what is left in the cgroup and
// removes both). cmd.SysProcAttr must be set. release, once cmd has
// exited, lets the thread that started it go.
func startContained(project string, cmd *exec.Cmd, g grant) (release, done func(), err error) {
	s, err := config.Load(project)
	if err != nil {
		return nil, nil, err
	}
	contained, closed, _, err := egress.Status(s.Sandbox, s.Egress)
	if err != nil {
		return nil, nil, err
	}
	if g.mustContain && !contained {
		return nil, nil, errNotContained
	}
	if g.checkCache {
		g.goCache = checkGoCache(project, s)
	}
	tmp, err := os.MkdirTemp("", "fw-")
	if err != nil {
		return nil, nil, err
	}
	policy := sandbox.Policy{Write: append(g.write, tmp), OpenNetwork: !closed}
	var proxy *egress.Proxy
	if contained && closed {
		if proxy, err = startProxy(s, g, cmd, &policy); err != nil {
			os.RemoveAll(tmp)
			return nil, nil, err
		}
	}
	// A cgroup of its own, where there can be one: a daemon it starts ends
	// with it, however it left its process group.
	sandbox.SweepGroups(sandbox.GroupName(project, "fw-"), time.Minute)
	group, _ := sandbox.NewGroup(sandbox.GroupName(project, filepath.Base(tmp)), sandbox.DefaultLimits())
	done = func() { cleanUp(project, g, group, proxy, tmp) }
	cmd.Env = append(cmd.Env, sandbox.PrivateEnv(tmp, filepath.Join(tmp, ".cache"))...)
	cmd.Env = append(cmd.Env, copyCaches(g.caches, tmp, logOr(g.log))...)
	if err := serveGoCache(cmd, g, contained, tmp); err != nil {
		done()
		return nil, nil, err
	}
	spawn := sandbox.Spawn{Group: group}
	if contained {
		spawn.Policy = &policy
	}
	release, err = spawn.Start(cmd)
	if err != nil {
		done()
		return nil, nil, err
	}
	return release, done, nil
}

// startProxy starts cmd's egress proxy, for the hosts `egress:` and g
// allow, and lets policy connect to it, to the direct ports and to g's.
func startProxy(s config.Settings, g grant, cmd *exec.Cmd, policy *sandbox.Policy) (*egress.Proxy, error) {
	log := logOr(g.log)
	proxy, err := egress.Start(s.Egress.WithHosts(g.hosts...).Allow, func(line string) { fmt.Fprintf(log, "fleetwatch: %s\n", line) })
	if err != nil {
		return nil, err
	}
	cmd.Env = append(cmd.Env, proxy.Env()...)
	policy.Connect = append(append(policy.Connect, proxy.Port()), s.Egress.DirectPorts()...)
	for _, p := range g.connect {
		if p > 0 && p <= 65535 {
			policy.Connect = append(policy.Connect, uint16(p))
		}
	}
	return proxy, nil
}

// cleanUp ends a contained run: its cgroup and proxy go, the Go cache it
// used is noted, and its temp dir is removed.
func cleanUp(project string, g grant, group *sandbox.Group, proxy *egress.Proxy, tmp string) {
	group.Close()
	if proxy != nil {
		proxy.Close()
	}
	if line := g.goCache.usedSummary(tmp); line != "" && g.log != nil {
		fmt.Fprintf(g.log, "fleetwatch: %s\n", line)
		gocache.Touch(filepath.Join(tmp, usedName), trustedDir(project))
	}
	os.RemoveAll(tmp)
}

// errNotContained refuses a process that must run contained.
var errNotContained = errors.New("not contained here")

// serveGoCache gives a contained cmd its GOCACHEPROG; an uncontained one
// could write any layer, so it keeps the empty private GOCACHE, and the
// log of a go check says so.
func serveGoCache(cmd *exec.Cmd, g grant, contained bool, tmp string) error {
	if g.goCache == nil {
		return nil
	}
	if !contained {
		if len(cmd.Args) > 0 && filepath.Base(cmd.Args[0]) == "go" {
			fmt.Fprintf(logOr(g.log), "fleetwatch: not contained here, so this check's Go build cache starts empty (it could write a shared one)\n")
		}
		return nil
	}
	env, err := g.goCache.env(tmp)
	if err != nil {
		return err
	}
	cmd.Env = append(cmd.Env, env...)
	return nil
}

func logOr(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
