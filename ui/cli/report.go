package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/internal/spend"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
)

const reportLong = `What each tier (or endpoint, or model) delivers for what it costs: its runs
and their spend from the ledger beside what became of their plans in the event
log — landed, cost and tokens per landed change, how often the first checks
passed, how often a peer review asked for more work or the operator sent the
change back, scope violations, the median time from first claim to landing,
and how often a run said it was done and the checks then failed. A plan counts
for the tier of its last build before it landed.`

const reportExample = `  fleetwatch report                      # per tier, everything recorded
  fleetwatch report --by model --since 30d
  fleetwatch report --json`

var reportKeys = []string{"tier", "endpoint", "model"}

func reportCmd() *cobra.Command {
	cmd := leaf("report", "what each tier, endpoint or model delivers for what it costs", func(fs *pflag.FlagSet) body {
		var root, by, since string
		var asJSON bool
		rootFlag(fs, &root, rootHelp)
		fs.StringVar(&by, "by", "tier", "group by "+strings.Join(reportKeys, ", "))
		fs.StringVar(&since, "since", "", "only runs that ended since: a date (2026-12-01), a span back (7d, 12h) or today")
		fs.BoolVar(&asJSON, "json", false, "print JSON")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 0 {
				return fail(stderr, exitError, "report: takes no arguments, got %q", pos[0])
			}
			if !slices.Contains(reportKeys, by) {
				return fail(stderr, exitError, "report: --by %q: want one of %s", by, strings.Join(reportKeys, ", "))
			}
			from, err := parseSince(since, time.Now())
			if err != nil {
				return fail(stderr, exitError, "report: --since: %v", err)
			}
			lines, err := outcomes(findRoot(root), by, from, stderr)
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			if asJSON {
				return writeJSON(stdout, stderr, reportJSON{By: by, Lines: orEmpty(lines)})
			}
			printReport(stdout, stderr, by, lines)
			return exitOK
		}
	})
	cmd.Long, cmd.Example = reportLong, reportExample
	return cmd
}

type reportJSON struct {
	By    string        `json:"by"`
	Lines []ledger.Line `json:"lines"`
}

func outcomes(project, by string, since time.Time, stderr io.Writer) ([]ledger.Line, error) {
	t, err := planfs.Open(project)
	if err != nil {
		return nil, err
	}
	events, err := t.Events()
	if err != nil {
		return nil, err
	}
	o := ledger.NewOutcomes(events, by)
	bad, err := ledger.Read(project, since, o.Add)
	if bad > 0 {
		say(stderr, "report: %d lines of %s did not read and were skipped", bad, ledger.File)
	}
	return o.Lines(), err
}

func printReport(stdout, stderr io.Writer, by string, lines []ledger.Line) {
	if len(lines) == 0 {
		say(stderr, "report: no runs recorded yet (%s)", ledger.File)
		return
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tRUNS\tPLANS\tLANDED\tCOST\t$/LANDED\tTOK/LANDED\tCHECKS 1ST\tNEEDS WORK\tSENT BACK\tSCOPE\tTO LAND\tSAID DONE, FAILED\t\n", strings.ToUpper(by))
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t$%.2f\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t\n", tsvSafe(l.Key), l.Runs, l.Plans, l.Landed, l.CostUSD,
			perLanded(l, fmt.Sprintf("$%.2f", l.CostPerLanded)), perLanded(l, spend.FormatTokens(l.TokensPerLanded)),
			rate(l.FirstCheckPass, l.Checked), rate(l.NeedsWorkRate, l.Reviewed), rate(l.SendBackRate, l.Reviewed),
			l.ScopeViolations, toLand(l), l.SaidDoneFailed)
	}
	tw.Flush()
}

func perLanded(l ledger.Line, s string) string {
	if l.Landed == 0 {
		return "-"
	}
	return s
}

func rate(r float64, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f %% of %d", 100*r, of)
}

func toLand(l ledger.Line) string {
	if l.Landed == 0 {
		return "-"
	}
	return spanOf(l.MedianToLand)
}

// spanOf is sec seconds to the nearest second (20s, 51s, 2m25s), to the
// nearest minute from an hour up (3h12m): rounding a 20 s landing to the
// minute said it took none.
func spanOf(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	if d < time.Hour {
		return d.Round(time.Second).String()
	}
	s := strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
