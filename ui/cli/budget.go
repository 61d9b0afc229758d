package cli

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/spend"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
)

const budgetLong = `The budgets: in fleetwatch.yaml against what the ledger holds: today's spend
of the fleet, of each endpoint and tier with a daily budget, and each plan
that has spent 80 % or more of its budget. A run that reaches its run's or
its plan's budget is paused and waits in the inbox; 'budget extend' gives it
more and it goes on where it was.`

func budgetCmd() *cobra.Command {
	cmd := group("budget", "today's spend against the budgets; extend a plan's", budgetLong, true, budgetShowCmd(), budgetExtendCmd())
	cmd.Example = "  fleetwatch budget show\n  fleetwatch budget extend export-csv --by 1M"
	return cmd
}

func budgetShowCmd() *cobra.Command {
	cmd := leaf("show", "today's spend against each budget", func(fs *pflag.FlagSet) body {
		var root string
		rootFlag(fs, &root, rootHelp)
		return func(pos []string, stdout, stderr io.Writer) int {
			project := findRoot(root)
			s, err := config.Load(project)
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			spent, err := ledger.ReadSpent(project, time.Now())
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			printBudgets(stdout, s.Budgets, spent)
			return exitOK
		}
	})
	cmd.Long = "Each budget of fleetwatch.yaml's budgets: with today's spend (or a plan's, all\ntime) beside it and the share used; plans listed from 80 %."
	cmd.Example = "  fleetwatch budget show"
	return cmd
}

func budgetExtendCmd() *cobra.Command {
	cmd := leaf("extend SLUG", "give a plan's runs more to spend (a paused run goes on)", func(fs *pflag.FlagSet) body {
		var root, by, agent string
		rootFlag(fs, &root, rootHelp)
		fs.StringVar(&by, "by", "", "how much more: tokens, dollars or both, like 1M, $5 or \"1M, $5\"")
		fs.StringVar(&agent, "agent-id", "", "who extends it (default: operator-$USER, or $FLEET_AGENT_ID)")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) != 1 {
				return fail(stderr, exitError, "budget extend: want one plan (its slug or path), got %d", len(pos))
			}
			if id := os.Getenv("FLEET_AGENT_ID"); id != "" {
				// The budget is the agent's circuit breaker: a person raises it.
				return fail(stderr, exitError, "budget extend: refused: a person extends a budget, not an agent (FLEET_AGENT_ID=%s)", id)
			}
			more, err := spend.ParseLimit(by)
			if err != nil {
				return fail(stderr, exitError, "budget extend: --by: %v", err)
			}
			project := findRoot(root)
			slug, code := existingSlug(project, pos[0], stderr)
			if code != exitOK {
				return code
			}
			e := ledger.Extension{Plan: slug, Tokens: more.Tokens, USD: more.USD, By: orOperator(agent), At: time.Now()}
			if err := ledger.Extend(project, e); err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			fmt.Fprintf(stdout, "%s: budget extended by %s\n", slug, more)
			return exitOK
		}
	})
	cmd.Long = "Raises one plan's budget, and its runs', by tokens, dollars or both. A run\npaused at its budget goes on at its driver's next heartbeat; the extension is\nrecorded under var/fleet/usage/, where agents cannot write."
	cmd.Example = "  fleetwatch budget extend export-csv --by 1M\n  fleetwatch budget extend export-csv --by '$5'"
	return cmd
}

// existingSlug is arg's slug when a plan of that slug is in the tree.
func existingSlug(project, arg string, stderr io.Writer) (string, int) {
	t, err := planfs.Open(project)
	if err != nil {
		return "", fail(stderr, exitError, "%v", err)
	}
	slug := model.SlugOf(path.Base(arg))
	rel, err := t.SlugInUse(slug)
	if err != nil {
		return "", fail(stderr, exitError, "%v", err)
	}
	if rel == "" {
		return "", fail(stderr, exitError, "budget extend: no plan %q in %s", slug, t.Abs("."))
	}
	return slug, exitOK
}

func orOperator(agent string) string {
	if agent != "" {
		return agent
	}
	return operatorAgentID()
}

func printBudgets(w io.Writer, b config.Budgets, s ledger.Spent) {
	printSpent(w, b, s)
	if b.FleetDay.None() && len(b.EndpointDay) == 0 && len(b.TierDay) == 0 && b.Plan.None() && b.Run.None() {
		fmt.Fprintln(w, "no budgets: set budgets: in fleetwatch.yaml (fleetwatch help spend)")
		return
	}
	if !b.Run.None() {
		fmt.Fprintf(w, "%-28s %s\n", "each run", b.Run)
	}
	if !b.Plan.None() {
		fmt.Fprintf(w, "%-28s %s (a plan's - **Budget:** line overrides it)\n", "each plan", b.Plan)
	}
}

// printSpent prints a line per daily budget set, and per plan past 80 %
// of the plan budget: what was spent of it.
func printSpent(w io.Writer, b config.Budgets, s ledger.Spent) {
	line := func(what string, l spend.Limit, t ledger.Totals) {
		if l.None() {
			return
		}
		fmt.Fprintf(w, "%-28s %-24s %3.0f %%  of %s\n", what, t, 100*t.Fraction(l), l)
	}
	line("fleet today", b.FleetDay, s.FleetDay)
	for _, n := range slices.Sorted(maps.Keys(b.EndpointDay)) {
		line("endpoint "+n+" today", b.EndpointDay[n], s.EndpointDay[n])
	}
	for _, n := range slices.Sorted(maps.Keys(b.TierDay)) {
		line("tier "+n+" today", b.TierDay[n], s.TierDay[n])
	}
	for _, n := range slices.Sorted(maps.Keys(s.Plan)) {
		if t := s.Plan[n]; !b.Plan.None() && t.Fraction(b.Plan) >= 0.8 {
			line("plan "+n, b.Plan, t)
		}
	}
}
