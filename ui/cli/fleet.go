package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// Other machines' workers, as their drivers publish them through a remote
// claims backend (claims.Fleet): watch status lists them, and worker stop
// asks one to stop through its record.

// fleetTimeout bounds one read of the published records or one stop request.
const fleetTimeout = 30 * time.Second

// openFleet opens project's claims backend when it carries worker records;
// nil when its claims are the lease files (this machine only). The caller
// closes the backend.
func openFleet(project string) (claims.Backend, claims.Fleet, error) {
	b, err := openClaims(project, "")
	if err != nil || b == nil {
		return nil, nil, err
	}
	f, ok := b.(claims.Fleet)
	if !ok {
		b.Close()
		return nil, nil, nil
	}
	return b, f, nil
}

// statusFleet lists the workers other machines published, one row each,
// judged on this machine's clock.
func statusFleet(project string, row rowFunc) {
	b, f, err := openFleet(project)
	if err != nil {
		row("fleet", "cannot read the other machines' workers: %v", err)
		return
	}
	if b == nil {
		return
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), fleetTimeout)
	defer cancel()
	pubs, err := look.ReadPublished(ctx, f)
	if err != nil {
		row("fleet", "cannot read the other machines' workers: %v", err)
		return
	}
	if len(pubs) == 0 {
		row("fleet", "no worker on another machine publishes through %s", b.Name())
		return
	}
	label := "fleet"
	for _, p := range pubs {
		row(label, "%s on %s  %s", p.AgentID, p.Host, publishedWords(p))
		label = ""
	}
}

// publishedWords is one published worker in a status row.
func publishedWords(p look.Published) string {
	if p.Problem != "" {
		return "unreadable record: " + p.Problem
	}
	parts := []string{string(p.Health)}
	if p.ExitCode != nil {
		parts[0] += fmt.Sprintf(" %d", *p.ExitCode)
	}
	if p.Plan != "" {
		parts = append(parts, "plan "+p.Plan)
	}
	if what := strings.Trim(p.Tier+"/"+p.Model, "/"); what != "" {
		parts = append(parts, what)
	}
	if p.Spent.Tokens > 0 || p.Spent.USD > 0 {
		parts = append(parts, "spent "+p.Spent.String())
	}
	if p.Paused != "" {
		parts = append(parts, "paused: "+p.Paused)
	}
	if p.Note != "" {
		parts = append(parts, p.Note)
	}
	if p.LastLine != "" {
		parts = append(parts, "last: "+p.LastLine)
	}
	return strings.Join(parts, ", ")
}

// workerStopCmd is `worker stop`: a worker of this machine by its pid, as
// the other worker verbs; one on another machine (--host, or no state file
// here and a published record elsewhere) through its record.
func workerStopCmd() *cobra.Command {
	cmd := leaf("stop AGENT", "stop a worker's run; its plan goes back", func(fs *pflag.FlagSet) body {
		var root, host string
		rootFlag(fs, &root, rootHelp)
		fs.StringVar(&host, "host", "", "the machine the worker runs on, when not this one (asked through the claims backend)")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) != 1 {
				return fail(stderr, exitError, "worker stop: want one agent id, got %d", len(pos))
			}
			msg, err := stopWorker(findRoot(root), pos[0], host)
			if err != nil {
				return fail(stderr, exitError, "worker stop: %v", err)
			}
			fmt.Fprintf(stdout, "%s: %s\n", pos[0], msg)
			return exitOK
		}
	})
	cmd.Long = "Stops a worker's run; its plan goes back. A worker of this machine is signalled\nby its pid; one on another machine (--host, or found only in the claims\nbackend's records) is asked through the record its driver publishes, and\nstops at its next heartbeat."
	cmd.Example = "  fleetwatch worker stop w-mid-1\n  fleetwatch worker stop w-gpu-1 --host gpu-box"
	return cmd
}

// stopWorker stops agent: by its pid when its state file is here and host
// names no other machine, else through its published record.
func stopWorker(project, agent, host string) (string, error) {
	if host == "" || host == look.Hostname() {
		st, err := workerState(project, agent)
		if err == nil {
			return "asked to stop", proc.Stop(st)
		}
		if host != "" {
			return "", err
		}
		where, rerr := stopElsewhere(project, agent, "")
		if rerr != nil {
			return "", fmt.Errorf("%v; and %v", err, rerr)
		}
		host = where
	} else if _, err := stopElsewhere(project, agent, host); err != nil {
		return "", err
	}
	return "asked to stop on " + host + "; its driver stops its agent at its next heartbeat and gives its plan back", nil
}

// stopElsewhere asks agent on host (any other host publishing it, when
// host is "") to stop, and returns the host asked.
func stopElsewhere(project, agent, host string) (string, error) {
	b, f, err := openFleet(project)
	switch {
	case err != nil:
		return "", err
	case b == nil:
		return "", fmt.Errorf("%s runs on %s: its claims are this machine's lease files, which carry no stop request; stop it there", agent, cmp.Or(host, "another machine"))
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), fleetTimeout)
	defer cancel()
	if host != "" {
		// Its own record, read by the stop itself: never looked for in the
		// capped listing, where a flood of other records could hide it.
		return host, proc.StopRemote(ctx, f, look.State{AgentID: agent, Host: host}, whoAsks())
	}
	pubs, err := look.ReadPublished(ctx, f)
	if err != nil {
		return "", err
	}
	var found []look.Published
	for _, p := range pubs {
		if p.AgentID == agent && p.Health != look.Exited {
			found = append(found, p)
		}
	}
	switch {
	case len(found) == 0:
		return "", fmt.Errorf("no running worker %q on %s publishes through %s", agent, cmp.Or(host, "another machine"), b.Name())
	case len(found) > 1:
		return "", fmt.Errorf("%s runs on %s and %s: name one with --host", agent, found[0].Host, found[1].Host)
	}
	if err := proc.StopRemote(ctx, f, found[0].State, whoAsks()); err != nil {
		return "", err
	}
	return found[0].Host, nil
}

// whoAsks names the person asking, for the worker's log.
func whoAsks() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "an operator"
}
