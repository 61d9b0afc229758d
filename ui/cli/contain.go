package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers"
	"github.com/fleetwatch/fleetwatch/workers/converse"
	"github.com/fleetwatch/fleetwatch/workers/egress"
)

// newDriver is the driver for worker on ep, contained as fleetwatch.yaml's
// `sandbox:` says, with the extra paths endpoints.yaml grants its agents.
func (w *workOnce) newDriver(t *planfs.Tree, worker model.Worker, ep registry.Endpoint, argv []string) (*workers.Driver, error) {
	d := &workers.Driver{Tree: t, Worker: worker, Endpoint: ep.Name, BaseURL: ep.Upstream(), AgentEnv: ep.AgentEnv(), Preset: ep.Agent, Argv: argv, Resume: ep.ResumeCommand, TTL: w.ttl, Grace: w.stopGrace, AutoCommit: ep.AutoCommit,
		MaxProcs: ep.MaxProcesses, MaxMemory: ep.MaxMemory, Supervisor: supervisor(), Asks: ep.Asks}
	if ep.Talk != "" {
		talk, err := converse.Parse(ep.Talk)
		if err != nil {
			return nil, fmt.Errorf("endpoint %q: %v", ep.Name, err)
		}
		d.Talk, d.Prompt = talk, registry.TalkPrompt
	}
	s, err := config.Load(t.Project)
	if err != nil {
		return nil, err
	}
	d.Sandbox, d.Egress = s.Sandbox, s.Egress.WithHosts(ep.ModelHosts()...)
	if err := ep.PrepareHome(); err != nil {
		return nil, err
	}
	reg, err := registry.Load(w.registryPath(t))
	switch {
	case err == nil:
		d.SandboxWrite = reg.SandboxWriteFor(ep)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return d, nil
}

// uncontained is the line a face shows when agents would run unconfined
// here, or with their network open; "" when they are contained.
func uncontained(project string) string {
	s, err := config.Load(project)
	if err != nil {
		return ""
	}
	contained, closed, line, err := egress.Status(s.Sandbox, s.Egress)
	switch {
	case err != nil:
		return err.Error()
	case !contained || !closed:
		return line
	}
	return ""
}

// sayContainment prints, once, that agents would run uncontained here (or
// cannot start at all under `sandbox: require`); nothing when they are
// contained.
func sayContainment(project string, stderr io.Writer) {
	if line := uncontained(project); line != "" {
		say(stderr, "warning: %s", line)
	}
}
