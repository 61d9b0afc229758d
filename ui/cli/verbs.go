package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers"
	"github.com/fleetwatch/fleetwatch/workers/contain"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// verb is the shape every operator verb shares: flags, one plan argument
// looked up in the lanes the verb table gives it, an engine call, and the
// new place printed.
type verb struct {
	name   model.Verb
	short  string // the one-line help
	toHelp string // --to help; "" means the verb has no --to
	// withReason adds --reason; withTTL adds --lease-ttl, for recover, which
	// has nothing to force.
	withReason, withTTL bool
	act                 func(t *planfs.Tree, rel string, f *verbFlags) (string, error)
}

type verbFlags struct {
	common
	to     string
	reason string
	ttl    float64
	claims string
	stderr io.Writer // for warnings
}

func (v verb) command() *cobra.Command {
	return leaf(string(v.name)+" PLAN", v.short, func(fs *pflag.FlagSet) body {
		var f verbFlags
		f.register(fs, operatorAgentID(), !v.withTTL)
		if v.toHelp != "" {
			fs.StringVar(&f.to, "to", string(model.RuleOf(v.name).Default), v.toHelp)
		}
		if v.withReason {
			fs.StringVar(&f.reason, "reason", "", "why, recorded in the event log")
		}
		if v.withTTL {
			fs.Float64Var(&f.ttl, "lease-ttl", planfs.DefaultTTL, "lease time to live, seconds")
		}
		fs.StringVar(&f.claims, "claims", "", claimsFlagHelp)
		return func(pos []string, stdout, stderr io.Writer) int {
			f.stderr = stderr
			return v.run(&f, pos, stdout, stderr)
		}
	})
}

func (v verb) run(f *verbFlags, pos []string, stdout, stderr io.Writer) int {
	if len(pos) != 1 {
		return fail(stderr, exitError, "%s: want exactly one plan (slug or path), got %d", v.name, len(pos))
	}
	if ask, ok := agentAsks[v.name]; ok && driverSocket() != "" {
		req := contain.AgentRequest{Verb: ask, Plan: pos[0], Token: f.token, To: f.to, Reason: f.reason}
		return askDriver(driverSocket(), req, stdout, stderr)
	}
	t, err := f.open()
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	if code, remote := v.remote(t, f, pos[0], stdout, stderr); remote {
		return code
	}
	rel, err := resolvePlan(t, pos[0], model.RuleOf(v.name).From...)
	if err != nil {
		return fail(stderr, exitError, "%s: %v", v.name, err)
	}
	dst, err := v.act(t, rel, f)
	if err != nil {
		hint := ""
		if !v.withTTL { // every verb but recover has --force
			hint = forceHint(err)
		}
		return fail(stderr, exitError, "%s: %v%s", v.name, err, hint)
	}
	fmt.Fprintln(stdout, t.Abs(dst))
	return exitOK
}

// target reads a --to (or --target-lane) value for verb: a lane the verb
// table lets it send plans to.
func target(s, flag string, v model.Verb) (model.Lane, error) {
	r := model.RuleOf(v)
	l, known := model.ParseLane(s)
	if !known || !r.Sends(l) {
		return "", fmt.Errorf("--%s must be %s, not %q", flag, model.Alternatives(r.To), s)
	}
	return l, nil
}

func promoteCmd() *cobra.Command {
	return verb{
		name: model.Promote, short: "move a draft to bugs/ or features/", toHelp: "bugs or features (required)",
		act: func(t *planfs.Tree, rel string, f *verbFlags) (string, error) {
			to, err := target(f.to, "to", model.Promote)
			if err != nil {
				return "", err
			}
			dst, problems, err := t.Promote(rel, to, planfs.Actor{AgentID: f.agent, Force: f.force})
			if err == nil {
				for _, p := range problems {
					say(f.stderr, "warning: %s: %s", rel, p)
				}
			}
			return dst, err
		},
	}.command()
}

func parkCmd() *cobra.Command {
	return verb{
		name: model.Park, short: "set a plan aside in ambiguous/ or blocked/",
		toHelp: "ambiguous or blocked (required)", withReason: true,
		act: func(t *planfs.Tree, rel string, f *verbFlags) (string, error) {
			to, err := target(f.to, "to", model.Park)
			if err != nil {
				return "", err
			}
			return t.Park(rel, to, f.actor().Because(f.reason))
		},
	}.command()
}

func returnCmd() *cobra.Command {
	return verb{
		name: model.Return, short: "send a parked or claimed plan back to its ready lane",
		toHelp: "bugs or features (default: the lane it came from)",
		act: func(t *planfs.Tree, rel string, f *verbFlags) (string, error) {
			var to model.Lane
			if f.to != "" {
				var err error
				if to, err = target(f.to, "to", model.Return); err != nil {
					return "", err
				}
			}
			return t.Return(rel, to, f.actor())
		},
	}.command()
}

func releaseCmd() *cobra.Command {
	return verb{
		name: model.Release, short: "give up a claim; the plan goes back where it came from",
		act: func(t *planfs.Tree, rel string, f *verbFlags) (string, error) {
			return t.Release(rel, f.actor())
		},
	}.command()
}

func recoverCmd() *cobra.Command {
	return verb{
		name: model.Recover, short: "take over a plan whose lease expired or is unreadable", withTTL: true,
		act: func(t *planfs.Tree, rel string, f *verbFlags) (string, error) {
			if err := planfs.ValidTTL(f.ttl); err != nil {
				return "", fmt.Errorf("--lease-ttl: %v", err)
			}
			_, err := proc.Recover(t, rel, f.actor(), f.ttl)
			return rel, err
		},
	}.command()
}

func completeCmd() *cobra.Command {
	return verb{
		name: model.Complete, short: "move a claimed plan to completed/ (or review-needed/)",
		toHelp: "completed or review-needed",
		act: func(t *planfs.Tree, rel string, f *verbFlags) (string, error) {
			to, err := target(f.to, "to", model.Complete)
			if err != nil {
				return "", err
			}
			return t.Complete(rel, to, f.actor())
		},
	}.command()
}

func scaffoldCmd() *cobra.Command {
	cmd := leaf("scaffold [DIR]", "start a project: a .plans/ tree, and commented fleetwatch.yaml and endpoints.yaml", func(fs *pflag.FlagSet) body {
		var root string
		rootFlag(fs, &root, "the folder to scaffold, as DIR (default: the current folder)")
		return func(pos []string, stdout, stderr io.Writer) int {
			dir := "."
			if root != "" {
				dir = root
			}
			switch len(pos) {
			case 0:
			case 1:
				if root != "" && pos[0] != root {
					return fail(stderr, exitError, "scaffold: give the folder as DIR or --root, not both")
				}
				dir = pos[0]
			default:
				return fail(stderr, exitError, "scaffold: want at most one folder, got %d", len(pos))
			}
			return scaffold(dir, root != "" || len(pos) == 1, stdout, stderr)
		}
	})
	cmd.Long, cmd.Example = scaffoldLong, scaffoldExample
	return cmd
}

func checkCmd() *cobra.Command {
	return leaf("check", "lint every plan and lease (writes nothing)", func(fs *pflag.FlagSet) body {
		var c common
		var jsonOut, accept bool
		c.registerRoot(fs)
		fs.BoolVar(&jsonOut, "json", false, "print the problems as a JSON list")
		fs.BoolVar(&accept, "accept-rewind", false, "with git claims: let the plans a backward move of the integration branch reopened be claimed again (the only thing check ever writes)")
		return func(pos []string, stdout, stderr io.Writer) int {
			t, snap, code := c.scanned("check", pos, stderr)
			if t == nil {
				return code
			}
			sayContainment(t.Project, stderr)
			snap, _ = t.Preview(snap)
			problems := checkProblems(t, snap, accept, stdout)
			if jsonOut {
				if problems == nil {
					problems = []model.Warning{}
				}
				if err := encodeJSON(stdout, problems, ""); err != nil {
					return fail(stderr, exitError, "writing JSON: %v", err)
				}
			} else {
				printProblems(stdout, stderr, t, snap, problems)
			}
			if len(problems) > 0 {
				return exitNothing
			}
			return exitOK
		}
	})
}

// checkProblems lints what check covers: the tree, what only a remote
// claims backend's view shows, var/ and the landing gate.
func checkProblems(t *planfs.Tree, snap *model.Snapshot, accept bool, stdout io.Writer) []model.Warning {
	problems := t.Check(snap)
	problems = append(problems, remoteProblems(t.Project, accept, stdout)...)
	// var/ is workers' ground, beside the tree: a symlink there takes their
	// logs, state and worktrees out of the project.
	problems = append(problems, look.SymlinkProblems(t.Project)...)
	// The landing gate: checks the working tree would change, an
	// integration branch moved outside the queue.
	notices, err := landing.Notices(t.Project)
	if err != nil {
		notices = []model.Warning{{File: "landing", Message: err.Error()}}
	}
	return append(problems, notices...)
}

// printProblems prints check's problems one line each, then their count on
// stderr, or that there are none.
func printProblems(stdout, stderr io.Writer, t *planfs.Tree, snap *model.Snapshot, problems []model.Warning) {
	for _, p := range problems {
		loc := p.File
		if p.Line > 0 {
			loc = fmt.Sprintf("%s:%d", p.File, p.Line)
		}
		fmt.Fprintln(stdout, termtext.Line(loc+": "+p.Message))
	}
	if len(problems) > 0 {
		say(stderr, "check: %d problem(s) in %s", len(problems), t.Plans)
		return
	}
	fmt.Fprintf(stdout, "ok: %d plans, %d leases, no problems\n", len(snap.Plans), len(snap.Leases))
}

// scanned opens the tree of a verb that takes no arguments and scans it;
// on failure the tree is nil and code is the exit code, the reason said.
func (c *common) scanned(verb string, pos []string, stderr io.Writer) (t *planfs.Tree, snap *model.Snapshot, code int) {
	if len(pos) > 0 {
		return nil, nil, fail(stderr, exitError, "%s: unexpected argument %q", verb, pos[0])
	}
	t, err := c.open()
	if err != nil {
		return nil, nil, fail(stderr, exitError, "%v", err)
	}
	snap, err = t.Scan()
	if err != nil {
		return nil, nil, fail(stderr, exitError, "cannot read %s: %v", t.Plans, err)
	}
	return t, snap, 0
}

// repairCmd makes the repairs every claim starts with, and says what it did
// and what it leaves to a person; exit 1 when there was nothing to do.
func repairCmd() *cobra.Command {
	return leaf("repair", "finish or undo what killed workers left half done (as every claim does first)", func(fs *pflag.FlagSet) body {
		var c common
		c.registerRoot(fs)
		return func(pos []string, stdout, stderr io.Writer) int {
			t, snap, code := c.scanned("repair", pos, stderr)
			if t == nil {
				return code
			}
			r := t.Repair(snap)
			for _, n := range r.Fixed {
				fmt.Fprintln(stdout, "repaired: "+n)
			}
			for _, n := range r.Unfixed {
				say(stderr, "warning: %s: %s", n.File, n.Message)
			}
			if len(r.Fixed) == 0 {
				fmt.Fprintln(stdout, "nothing to repair")
				return exitNothing
			}
			return exitOK
		}
	})
}

// forceHint is " (--force overrides)" after an error --force overrides,
// for a verb that takes --force.
func (v verb) forceHint(err error) string {
	if (errors.Is(err, claims.ErrNotHolder) || errors.Is(err, planfs.ErrNeedsForce)) && !v.withTTL {
		return " (--force overrides)"
	}
	return ""
}

// remote runs an operator verb through the project's claims backend when
// its claims are remote: one claims.Act on a fresh view, the call the UI
// makes too. It reports false when claims are the local lease files.
func (v verb) remote(t *planfs.Tree, f *verbFlags, arg string, stdout, stderr io.Writer) (int, bool) {
	name, _, where, err := actingClaims(t.Project, f.claims, stderr)
	if err != nil {
		return fail(stderr, exitError, "%s: %v", v.name, err), true
	}
	if name == "local" {
		return 0, false
	}
	ttl := time.Duration(f.ttl * float64(time.Second))
	if v.withTTL {
		if err := claims.ValidTTL(ttl); err != nil {
			return fail(stderr, exitError, "%s: --lease-ttl: %v", v.name, err), true
		}
	}
	b, err := openClaims(t.Project, f.claims)
	if err != nil {
		return fail(stderr, exitError, "%s: %s: %v", v.name, where, err), true
	}
	defer b.Close()
	ctx, stop := stopContext()
	defer stop()
	view, err := b.View(ctx)
	if err != nil {
		return fail(stderr, exitError, "%s: %s: %v", v.name, where, err), true
	}
	host := look.Hostname()
	res, err := claims.Act(ctx, b, view, claims.Op{
		Verb: v.name, Slug: slugArg(arg), To: model.Lane(f.to), Why: f.reason, Token: f.token, Force: f.force, TTL: ttl,
		Holder: claims.Holder{AgentID: f.agent, Host: host, PID: os.Getpid()},
	})
	if err != nil {
		return fail(stderr, exitError, "%s: %v%s", v.name, err, v.forceHint(err)), true
	}
	if res.Dropped != nil && res.Dropped.AgentID != f.agent {
		say(stderr, "%s: %s's lease%s dropped", res.Rel, res.Dropped.AgentID, workers.HeldOn(&res.Dropped.Lease, " "))
	}
	fmt.Fprintln(stdout, t.Abs(res.Rel))
	return exitOK, true
}
