package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// A person talks to a running agent through its driver: a note (tell),
// an interrupt of its turn, the answer to its question. The driver checks
// the lease, acts, logs the message in the event log and says how it took
// it; a worker on another machine hears it through the claims backend at
// its next heartbeat.

const tellLong = `Sends a note to AGENT's running agent, through its driver. A conversation
(an endpoint with talk:) hears it at once: in the running turn where its protocol
steers, else as its next turn. A one-shot run cannot hear it: the note is kept for
the plan's next run, which says so. NOTE "-" reads the note from stdin (4 KiB at most).
A worker on another machine (--host, or found only in the claims backend) hears it
at its next heartbeat. Exit 0 taken, 1 refused (not running, lease lost: the
reason is said), 2 on an error.`

const interruptLong = `Ends the running turn of AGENT's conversation without ending the run: the
agent stops what it does and waits for a note (fleetwatch tell), or for
wait_for_answer: (fleetwatch.yaml, 30m by default), after which its plan is parked.
A one-shot run has no turn to interrupt (fleetwatch worker stop ends a run).
Exit 0 interrupted, 1 refused, 2 on an error.`

const answerLong = `Answers the question or permission request AGENT's run waits on (fleetwatch
inbox lists them, "waiting for input"). A permission request takes --allow, --deny
or --option ID (one of its options); a question takes TEXT. --ask names the request
when the run waits on several (default: the oldest). Exit 0 answered, 1 refused,
2 on an error.`

func tellCmd() *cobra.Command {
	cmd := messageCmd("tell AGENT NOTE...", "send a note to a running agent", claims.MailTell,
		func(pos []string, m *claims.Message, _ look.State) error {
			if len(pos) == 0 {
				return fmt.Errorf("want a note after the agent id")
			}
			note := strings.Join(pos, " ")
			if note == "-" {
				b, err := io.ReadAll(io.LimitReader(os.Stdin, claims.MaxMailText+1))
				if err != nil {
					return err
				}
				if len(b) > claims.MaxMailText {
					return fmt.Errorf("the note on stdin is longer than %d bytes", claims.MaxMailText)
				}
				note = string(b)
			}
			m.Text = note
			return nil
		}, nil)
	cmd.Long = tellLong
	cmd.Example = "  fleetwatch tell w-mid-1 \"use the v2 API, not v1\"\n  fleetwatch tell w-mid-1 - < notes.md"
	return cmd
}

func interruptCmd() *cobra.Command {
	cmd := messageCmd("interrupt AGENT", "end a running agent's turn, not its run", claims.MailInterrupt,
		func(pos []string, _ *claims.Message, _ look.State) error {
			if len(pos) != 0 {
				return fmt.Errorf("want only the agent id")
			}
			return nil
		}, nil)
	cmd.Long = interruptLong
	cmd.Example = "  fleetwatch interrupt w-mid-1"
	return cmd
}

// answerFlags are answer's own flags.
type answerFlags struct {
	ask, option string
	allow, deny bool
}

func answerCmd() *cobra.Command {
	var af answerFlags
	cmd := messageCmd("answer AGENT [TEXT...]", "answer a running agent's question or permission request", claims.MailAnswer,
		func(pos []string, m *claims.Message, st look.State) error { return af.fill(pos, m, st) },
		func(fs *pflag.FlagSet) {
			fs.StringVar(&af.ask, "ask", "", "the request answered (default: the one the run waits on)")
			fs.StringVar(&af.option, "option", "", "the option chosen, by its id")
			fs.BoolVar(&af.allow, "allow", false, "allow what the agent asks (its first allowing option)")
			fs.BoolVar(&af.deny, "deny", false, "refuse what the agent asks")
		})
	cmd.Long = answerLong
	cmd.Example = "  fleetwatch answer w-mid-1 --allow\n  fleetwatch answer w-mid-1 \"use postgres 16\""
	return cmd
}

// fill makes m the answer the flags and TEXT say, to the request st's run
// waits on unless --ask names another.
func (af answerFlags) fill(pos []string, m *claims.Message, st look.State) error {
	m.Ask, m.Text, m.Option, m.Deny = af.ask, strings.Join(pos, " "), af.option, af.deny
	ways := 0
	for _, set := range []bool{af.allow, af.deny, af.option != "", m.Text != ""} {
		if set {
			ways++
		}
	}
	if ways != 1 {
		return fmt.Errorf("give one answer: --allow, --deny, --option ID or TEXT")
	}
	if m.Ask == "" && st.Asking != nil {
		m.Ask = st.Asking.ID
	}
	if m.Ask == "" {
		return fmt.Errorf("%s waits on no question here; name one with --ask", st.AgentID)
	}
	if af.allow {
		m.Option = st.Asking.FirstAllowing()
		if m.Option == "" {
			return fmt.Errorf("the request %s offers no option that allows: choose one with --option", m.Ask)
		}
	}
	return nil
}

// messageCmd is a verb that sends one message of kind to a running agent:
// fill makes the message from the arguments after the agent id and the
// worker's state (a zero one when it runs elsewhere); flags adds the
// verb's own flags.
func messageCmd(use, short, kind string, fill func([]string, *claims.Message, look.State) error, flags func(*pflag.FlagSet)) *cobra.Command {
	name, _, _ := strings.Cut(use, " ")
	return leaf(use, short, func(fs *pflag.FlagSet) body {
		var root, host string
		rootFlag(fs, &root, rootHelp)
		fs.StringVar(&host, "host", "", "the machine the worker runs on, when not this one (sent through the claims backend)")
		if flags != nil {
			flags(fs)
		}
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) == 0 {
				return fail(stderr, exitError, "%s: want an agent id", name)
			}
			m := claims.Message{Kind: kind, By: operatorAgentID()}
			project := findRoot(root)
			st, local := localWorker(project, pos[0], host)
			if !local {
				return sendElsewhere(project, st, &m, func(st look.State) error { return fill(pos[1:], &m, st) }, stdout, stderr)
			}
			if err := fill(pos[1:], &m, st); err != nil {
				return fail(stderr, exitError, "%s: %v", name, err)
			}
			return sendHere(project, st, m, stdout, stderr)
		}
	})
}

// localWorker is agent's state file here, when host names this machine.
func localWorker(project, agent, host string) (look.State, bool) {
	if host != "" && host != look.Hostname() {
		return look.State{AgentID: agent, Host: host}, false
	}
	st, err := workerState(project, agent)
	if err != nil {
		return look.State{AgentID: agent}, false
	}
	return st, true
}

// sendHere hands m to st's driver on this machine and says how it took it.
func sendHere(project string, st look.State, m claims.Message, stdout, stderr io.Writer) int {
	t, err := planfs.Open(project)
	if err != nil {
		return fail(stderr, exitError, "%s: %v", m.Kind, err)
	}
	rep, err := proc.Tell(t, st, m)
	if err != nil {
		return fail(stderr, exitNothing, "%s: %v", m.Kind, err)
	}
	return sayReply(m.Kind, st.AgentID, rep, stdout, stderr)
}

// sendElsewhere leaves m for st's agent on another machine (st.Host, or
// the one machine that publishes it when "") through the claims backend,
// once fill has made it (in place) from the worker's published record.
func sendElsewhere(project string, st look.State, m *claims.Message, fill func(look.State) error, stdout, stderr io.Writer) int {
	b, f, err := openFleet(project)
	switch {
	case err != nil:
		return fail(stderr, exitError, "%s: %v", m.Kind, err)
	case b == nil:
		return fail(stderr, exitNothing, "%s: no worker %q runs here, and the claims backend keeps no other machine's workers", m.Kind, st.AgentID)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), fleetTimeout)
	defer cancel()
	pub, err := publishedWorker(ctx, f, st.AgentID, st.Host)
	if err != nil {
		return fail(stderr, exitNothing, "%s: %v", m.Kind, err)
	}
	if pub.Health == look.Exited || pub.Health == look.Dead {
		return fail(stderr, exitNothing, "%s: %s on %s is %s; nothing to %s", m.Kind, pub.AgentID, pub.Host, pub.Health, m.Kind)
	}
	if err := fill(pub.State); err != nil {
		return fail(stderr, exitError, "%s: %v", m.Kind, err)
	}
	if err := proc.TellRemote(ctx, f, pub.State, *m); err != nil {
		return fail(stderr, exitNothing, "%s: %v", m.Kind, err)
	}
	fmt.Fprintf(stdout, "%s on %s: sent; its driver takes it at its next heartbeat and logs how\n", pub.AgentID, pub.Host)
	return exitOK
}

// publishedWorker is agent's record on host, or on the one machine that
// publishes it running when host is "".
func publishedWorker(ctx context.Context, f claims.Fleet, agent, host string) (look.Published, error) {
	if host != "" {
		return look.ReadWorker(ctx, f, host, agent)
	}
	pubs, err := look.ReadPublished(ctx, f)
	if err != nil {
		return look.Published{}, err
	}
	var found []look.Published
	for _, p := range pubs {
		if p.AgentID == agent && p.Health != look.Exited && p.Host != look.Hostname() {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return look.Published{}, fmt.Errorf("no worker %q runs here or publishes a running record", agent)
	case 1:
		return found[0], nil
	}
	return look.Published{}, fmt.Errorf("%s runs on %s and %s: name one with --host", agent, found[0].Host, found[1].Host)
}

// sayReply prints how a driver took a message: exit 0, or 1 when it
// refused it.
func sayReply(kind, agent string, rep look.MailReply, stdout, stderr io.Writer) int {
	if rep.Outcome == look.MailRefused {
		return fail(stderr, exitNothing, "%s: %s refused: %s", kind, agent, rep.Reason)
	}
	line := agent + ": " + rep.Outcome
	if rep.Reason != "" {
		line += " (" + rep.Reason + ")"
	}
	if rep.Plan != "" {
		line += " on " + rep.Plan
	}
	fmt.Fprintln(stdout, line)
	return exitOK
}
