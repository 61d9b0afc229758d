package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/internal/spend"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/meter"
)

const usageLong = `What the fleet's runs spent, from the ledger every driver appends to
(var/fleet/usage/runs.jsonl, where agents cannot write), summed by plan, tier,
endpoint, model, agent or day, the costliest first. Tokens a run's proxy
metered from its endpoint's answers count as metered; tokens only the agent
reported (Claude Code's and Codex's JSON, $FLEET_USAGE) are marked reported;
a run with calls whose answers reported no usage that could be read, counted
from their bytes instead, is marked estimated.
Cost is tokens at the prices: in fleetwatch.yaml, or what the agent reported;
a model with no price shows its tokens and "no price".`

const usageExample = `  fleetwatch usage                        # by plan, every run recorded
  fleetwatch usage --by tier --since 7d   # the last week, per tier
  fleetwatch usage --by day --json        # for a script`

func usageCmd() *cobra.Command {
	cmd := leaf("usage", "what the fleet's runs spent, by plan, tier, endpoint, model, agent or day", func(fs *pflag.FlagSet) body {
		var root, by, since string
		var asJSON bool
		rootFlag(fs, &root, rootHelp)
		fs.StringVar(&by, "by", "plan", "group by "+strings.Join(ledger.Keys, ", "))
		fs.StringVar(&since, "since", "", "only runs that ended since: a date (2026-12-01), a span back (7d, 12h) or today")
		fs.BoolVar(&asJSON, "json", false, "print JSON")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 0 {
				return fail(stderr, exitError, "usage: takes no arguments, got %q", pos[0])
			}
			if !slices.Contains(ledger.Keys, by) {
				return fail(stderr, exitError, "usage: --by %q: want one of %s", by, strings.Join(ledger.Keys, ", "))
			}
			from, err := parseSince(since, time.Now())
			if err != nil {
				return fail(stderr, exitError, "usage: --since: %v", err)
			}
			sums := ledger.NewSums(by)
			bad, err := ledger.Read(findRoot(root), from, sums.Add)
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			if bad > 0 {
				say(stderr, "usage: %d lines of %s did not read and were skipped", bad, ledger.File)
			}
			if asJSON {
				return writeJSON(stdout, stderr, usageJSON{By: by, Groups: orEmpty(sums.Groups())})
			}
			printUsage(stdout, stderr, by, sums.Groups())
			return exitOK
		}
	})
	cmd.Long, cmd.Example = usageLong, usageExample
	return cmd
}

type usageJSON struct {
	By     string         `json:"by"`
	Groups []ledger.Group `json:"groups"`
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// parseSince reads --since: "" (every run), today, a date, or a span back
// from now (7d, 12h, 30m).
func parseSince(s string, now time.Time) (time.Time, error) {
	switch {
	case s == "":
		return time.Time{}, nil
	case s == "today":
		y, m, d := now.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, now.Location()), nil
	case strings.HasSuffix(s, "d"):
		if n, err := strconv.Atoi(strings.TrimSuffix(s, "d")); err == nil && n > 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, now.Location()); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("want a date (2026-12-01), a span back (7d, 12h) or today, not %q", s)
}

func printUsage(stdout, stderr io.Writer, by string, groups []ledger.Group) {
	if len(groups) == 0 {
		say(stderr, "usage: no runs recorded yet (%s)", ledger.File)
		return
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tRUNS\tIN\tOUT\tCACHED\tCOST\t\n", strings.ToUpper(by))
	var total ledger.Group
	for _, g := range groups {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", tsvSafe(g.Key), g.Runs, spend.FormatTokens(g.Input), spend.FormatTokens(g.Output), spend.FormatTokens(g.Cached), costCell(g))
		total.Runs += g.Runs
		total.Input += g.Input
		total.Output += g.Output
		total.Cached += g.Cached
		total.CostUSD += g.CostUSD
		total.Unpriced += g.Unpriced
		total.Reported += g.Reported
		total.Estimated += g.Estimated
	}
	fmt.Fprintf(tw, "total\t%d\t%s\t%s\t%s\t%s\t\n", total.Runs, spend.FormatTokens(total.Input), spend.FormatTokens(total.Output), spend.FormatTokens(total.Cached), costCell(total))
	tw.Flush()
	if total.Unpriced > 0 {
		fmt.Fprintf(stdout, "%d runs have no price: set prices: {MODEL: {input: …, output: …}} in fleetwatch.yaml\n", total.Unpriced)
	}
	if total.Reported > 0 {
		fmt.Fprintf(stdout, "%d runs are as their agent reported them, not metered\n", total.Reported)
	}
	if total.Estimated > 0 {
		fmt.Fprintf(stdout, "%d runs had calls answered with no usage that could be read: estimated from their bytes (%d bytes a token)\n", total.Estimated, meter.BytesPerToken)
	}
}

// costCell is a group's dollars, "no price" when none of its runs had one.
func costCell(g ledger.Group) string {
	if g.Unpriced == g.Runs && g.CostUSD == 0 {
		return "no price"
	}
	s := fmt.Sprintf("$%.2f", g.CostUSD)
	if g.Unpriced > 0 {
		s += "+"
	}
	return s
}
