package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

const queueUsage = `Only approved candidates (fleetwatch review SLUG --approve) may be added.
land lands the head only: it builds the candidate on the integration branch, runs the
checks unless they passed on that exact tree, and moves the branch by compare-and-swap;
a second lander is refused at once. A person lands: land refuses under FLEET_AGENT_ID.
With queue: {batch: N} in fleetwatch.yaml, land lands up to N changes checked together
(a failing batch is retried once, then bisected; the culprit stays queued as failed).
run keeps landing while the head is ready and stops on what needs a person, or on ^C.
accept takes the integration branch's tip as your own move (a commit of settings or
plan moves made there), so the "moved outside the queue" alarm stops.
With forge: in fleetwatch.yaml each plan in review has a pull request; sync opens the
missing ones and reads the forge's word (states, checks, people's approvals and comments);
land reads it first, pushes the candidate to the PR with its checks as statuses, and lands
it by pushing to the base branch (land: queue) or through the forge's pinned merge (land: forge).
Exit codes: 0 done, 1 nothing to do or the head is not ready (why on stderr), 2 error or refused.
`

func queueCmd() *cobra.Command {
	return group("queue", "the merge queue: add, remove, list, land, run, send-back, accept, sync", queueUsage, false,
		queueAddCmd(), queueRemoveCmd(), queueListCmd(), queueLandCmd(), queueRunCmd(), queueSendBackCmd(), queueAcceptCmd(), queueSyncCmd())
}

// queueFlags are what every queue subcommand takes.
type queueFlags struct {
	name  string
	root  string
	agent string
}

func (q *queueFlags) register(fs *pflag.FlagSet, sub string, withAgent bool) {
	q.name = "queue " + sub
	rootFlag(fs, &q.root, rootHelp)
	if withAgent {
		agentFlag(fs, &q.agent, operatorAgentID(), "who is acting, for the event log")
	}
}

// open checks the positional arguments (want of them) and opens the tree;
// a negative code means go on.
func (q *queueFlags) open(pos []string, want int, stderr io.Writer) (*planfs.Tree, int) {
	if len(pos) != want {
		if want == 0 {
			return nil, fail(stderr, exitError, "%s: unexpected argument %q", q.name, pos[0])
		}
		return nil, fail(stderr, exitError, "%s: want exactly one slug, got %d", q.name, len(pos))
	}
	t, err := planfs.Open(findRoot(q.root))
	if err != nil {
		return nil, failErr(stderr, q.name, err)
	}
	return t, -1
}

func queueAddCmd() *cobra.Command {
	return leaf("add SLUG", "append an approved candidate to the queue", func(fs *pflag.FlagSet) body {
		var q queueFlags
		var hotfix bool
		q.register(fs, "add", true)
		fs.BoolVar(&hotfix, "hotfix", false, "jump the queue (behind earlier hotfixes); it lands alone, never in a batch")
		return func(pos []string, stdout, stderr io.Writer) int {
			t, code := q.open(pos, 1, stderr)
			if code >= 0 {
				return code
			}
			add := landing.AddAs
			if hotfix {
				add = landing.AddHotfix
			}
			if err := add(t, pos[0], q.agent); err != nil {
				return failErr(stderr, q.name, err)
			}
			fmt.Fprintf(stdout, "queued %s\n", cell(pos[0]))
			return exitOK
		}
	})
}

func queueRemoveCmd() *cobra.Command {
	return leaf("remove SLUG", "take an entry out of the queue (its approval stands)", func(fs *pflag.FlagSet) body {
		var q queueFlags
		q.register(fs, "remove", true)
		return func(pos []string, stdout, stderr io.Writer) int {
			t, code := q.open(pos, 1, stderr)
			if code >= 0 {
				return code
			}
			if err := landing.RemoveAs(t, pos[0], q.agent); err != nil {
				return failErr(stderr, q.name, err)
			}
			fmt.Fprintf(stdout, "removed %s\n", cell(pos[0]))
			return exitOK
		}
	})
}

func queueListCmd() *cobra.Command {
	return leaf("list", "every candidate and queue entry with its state, derived now", func(fs *pflag.FlagSet) body {
		var q queueFlags
		var asJSON bool
		q.register(fs, "list", false)
		fs.BoolVar(&asJSON, "json", false, "print the listing as JSON")
		return func(pos []string, stdout, stderr io.Writer) int {
			t, code := q.open(pos, 0, stderr)
			if code >= 0 {
				return code
			}
			l, err := landing.ListTree(t)
			if err != nil {
				return failErr(stderr, q.name, err)
			}
			if asJSON {
				if err := encodeJSON(stdout, l, "  "); err != nil {
					return failErr(stderr, q.name, err)
				}
				return exitOK
			}
			printListing(stdout, l)
			for _, n := range l.Notices {
				say(stderr, "warning: %s", termtext.Line(n))
			}
			return exitOK
		}
	})
}

// printListing is list's table: one row per candidate, queue order first.
func printListing(w io.Writer, l landing.Listing) {
	if len(l.Items) == 0 {
		fmt.Fprintf(w, "no candidates in review-needed/ and nothing queued (%s at %.12s)\n", cell(l.Integration), cell(l.Tip))
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	prs := slices.ContainsFunc(l.Items, func(s landing.Status) bool { return s.PR != nil })
	head := "#\tSLUG\tSTATE\tCOMMIT\tAHEAD/BEHIND\tAPPROVED BY\tCHECKS\tWHY"
	if prs {
		head = "#\tSLUG\tSTATE\tPR\tCOMMIT\tAHEAD/BEHIND\tAPPROVED BY\tCHECKS\tWHY"
	}
	fmt.Fprintln(tw, head)
	for _, s := range l.Items {
		pos := "-"
		if s.Position != nil {
			pos = fmt.Sprint(*s.Position)
		}
		checks := checkWords(s.Checks)
		if s.Ungated && s.State != landing.NoChange {
			checks = []string{"ungated"}
		}
		approved := s.ApprovedBy
		if approved == "" {
			approved = "-"
		}
		why := s.Why
		if len(s.ConflictPaths) > 0 && why == "" {
			why = strings.Join(s.ConflictPaths, ", ")
		}
		if len(s.ScopeViolations) > 0 {
			why = joinWords(why, fmt.Sprintf("⚠ %d path(s) out of scope: %s", len(s.ScopeViolations), strings.Join(s.ScopeViolations[:min(3, len(s.ScopeViolations))], ", ")))
		}
		state := cell(string(s.State))
		if prs {
			state += "\t" + prWords(s.PR)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.12s\t+%d/-%d\t%s\t%s\t%s\n", pos, cell(s.Slug), state, cell(s.Commit),
			s.Ahead, s.Behind, cell(approved), cell(strings.Join(checks, " ")), cell(why))
	}
	tw.Flush()
	printBatch(w, l.Batch)
}

// prWords is a PR's number, state and checks, "-" for none; the forge's
// words are cut to one safe line each.
func prWords(pr *landing.PR) string {
	if pr == nil || pr.Number == 0 {
		return "-"
	}
	words := fmt.Sprintf("#%d %s", pr.Number, cell(pr.State))
	if pr.Checks != "" {
		words += " " + cell(pr.Checks)
	}
	return words + " " + cell(pr.URL)
}

func queueSyncCmd() *cobra.Command {
	c := queueSyncLeaf()
	c.Long = `With forge: in fleetwatch.yaml, reads the forge for every plan in review-needed/:
opens the pull request of a plan that has none (pushing its branch), records each
PR's state and checks, takes an approval given on the forge by a person who may push
there, on the exact commit the plan's branch is at, as that person's approval, and
keeps people's new comments for the inbox. queue land reads it first; the cockpit
every minute. Exit codes: 0 done, 2 no forge or an error.`
	c.Example = `  fleetwatch queue sync
  FORGE_TOKEN=$(cat ~/.config/fleetwatch/forge-token) fleetwatch queue sync`
	return c
}

func queueSyncLeaf() *cobra.Command {
	return leaf("sync", "read the forge: open missing pull requests, take in approvals, comments and states", func(fs *pflag.FlagSet) body {
		var q queueFlags
		q.register(fs, "sync", false)
		return func(pos []string, stdout, stderr io.Writer) int {
			t, code := q.open(pos, 0, stderr)
			if code >= 0 {
				return code
			}
			if !landing.ForgeOn(t.Project) {
				return fail(stderr, exitError, "%s: no forge: in %s (fleetwatch help landing)", q.name, t.Project)
			}
			ctx, stop := stopContext()
			defer stop()
			said, err := landing.SyncForge(ctx, t)
			for _, line := range said {
				fmt.Fprintln(stdout, termtext.Line(line))
			}
			if err != nil {
				return failErr(stderr, q.name, err)
			}
			return exitOK
		}
	})
}

// checkWords is name:result per check, a pass on a retry as pass(flaky).
func checkWords(res []landing.CheckResult) []string {
	var out []string
	for _, c := range res {
		word := c.Name + ":" + string(c.Result)
		if c.Flaky {
			word += "(flaky)"
		}
		out = append(out, word)
	}
	return out
}

// printBatch says which changes ride together in the next batch, its
// checks, and how far the bisection of a failed one has come.
func printBatch(w io.Writer, b *landing.BatchView) {
	if b == nil {
		return
	}
	slugs := make([]string, len(b.Slugs))
	for i, s := range b.Slugs {
		slugs[i] = cell(s)
	}
	fmt.Fprintf(w, "next batch: %s on %.12s, checks %s\n", strings.Join(slugs, ", "), b.Candidate, strings.Join(checkWords(b.Checks), " "))
	if b.Retried {
		fmt.Fprintln(w, "  retried once as is")
	}
	if bi := b.Bisection; bi != nil {
		line := fmt.Sprintf("  bisecting: the first %d pass, the first %d fail", bi.Passing, bi.Failing)
		if len(bi.Running) > 0 {
			line += fmt.Sprintf(", checking %v", bi.Running)
		}
		if bi.Culprit != "" {
			line += "; culprit " + cell(bi.Culprit)
		}
		fmt.Fprintln(w, line)
	}
}

// joinWords is a and b as one reason, "; " between when both say something.
func joinWords(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// cell keeps a table cell on its line and the terminal safe, as board
// does: plan names, approval records and notes come from files an agent
// may have written, and may hold tabs, escape sequences (OSC 52 writes the
// operator's clipboard) or bidi overrides.
func cell(s string) string { return termtext.Line(s) }

func queueLandCmd() *cobra.Command {
	return leaf("land", "land the queue's head on the integration branch (a person, never an agent)", func(fs *pflag.FlagSet) body {
		var q queueFlags
		var yes, ungated bool
		q.register(fs, "land", true)
		fs.BoolVar(&yes, "yes", false, "do not ask for a confirmation naming the commit")
		fs.BoolVar(&ungated, "ungated", false, "land although no checks are configured")
		return func(pos []string, stdout, stderr io.Writer) int {
			t, code := q.open(pos, 0, stderr)
			if code >= 0 {
				return code
			}
			if id := os.Getenv("FLEET_AGENT_ID"); id != "" {
				return fail(stderr, exitError, "%s: refused: a person lands, not an agent (FLEET_AGENT_ID=%s)", q.name, id)
			}
			if !yes {
				if code := confirmLand(t, q.name, stdout, stderr); code >= 0 {
					return code
				}
			}
			ctx, stop := stopContext()
			defer stop()
			l, err := landing.Land(ctx, t, landing.LandOptions{Ungated: ungated, Actor: q.agent, Log: progress{stderr}})
			for _, w := range l.AllWarnings() {
				say(stderr, "warning: %s", w)
			}
			if err != nil {
				return failErr(stderr, q.name, err)
			}
			printLanded(stdout, l)
			return exitOK
		}
	})
}

// printLanded says what a landing landed: one line per change, then any
// change a bisection found failing.
func printLanded(w io.Writer, l landing.Landing) {
	if len(l.Batch) == 0 && l.Slug != "" {
		l.Batch = []landing.Landing{l}
	}
	for _, one := range l.Batch {
		fmt.Fprintf(w, "landed %s at %.12s: %s is now %.12s\n", cell(one.Slug), one.Commit, cell(l.Integration), one.To)
	}
	for _, slug := range l.Failed {
		fmt.Fprintf(w, "failed %s: it stays queued (queue list says why)\n", cell(slug))
	}
}

func queueRunCmd() *cobra.Command {
	c := queueRunLeaf()
	c.Long = `Lands the queue's head while it is ready, one landing after another, in the
foreground: a batch once its N changes are queued, its oldest waited queue: {wait:},
or a hotfix is queued. It waits on an empty queue, stops on the first thing that
needs a person (exit 1, the reason on stderr) and on ^C or SIGTERM (exit 0).`
	c.Example = `  fleetwatch queue run
  fleetwatch queue add --hotfix fix-login   # lands next, alone`
	return c
}

func queueRunLeaf() *cobra.Command {
	return leaf("run", "land the queue's head (or batch) while it is ready; stop on what needs a person", func(fs *pflag.FlagSet) body {
		var q queueFlags
		var ungated bool
		q.register(fs, "run", true)
		fs.BoolVar(&ungated, "ungated", false, "land although no checks are configured")
		return func(pos []string, stdout, stderr io.Writer) int {
			t, code := q.open(pos, 0, stderr)
			if code >= 0 {
				return code
			}
			if id := os.Getenv("FLEET_AGENT_ID"); id != "" {
				return fail(stderr, exitError, "%s: refused: a person lands, not an agent (FLEET_AGENT_ID=%s)", q.name, id)
			}
			ctx, stop := stopContext()
			defer stop()
			err := landing.RunQueue(ctx, t, landing.LandOptions{Ungated: ungated, Actor: q.agent, Log: progress{stderr}}, func(l landing.Landing) {
				for _, w := range l.AllWarnings() {
					say(stderr, "warning: %s", w)
				}
				printLanded(stdout, l)
			})
			if err != nil {
				return failErr(stderr, q.name, err)
			}
			say(stderr, "stopped")
			return exitOK
		}
	})
}

// progress prints a landing's steps as `fleetwatch: ` lines.
type progress struct{ w io.Writer }

func (p progress) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		say(p.w, "%s", line)
	}
	return len(b), nil
}

// confirmLand asks on the terminal before landing the head, naming its
// commit; without a terminal --yes is required. A negative code means go on.
func confirmLand(t *planfs.Tree, name string, stdout, stderr io.Writer) int {
	if !isTerminal(os.Stdin) {
		return fail(stderr, exitError, "%s: no terminal to confirm on; pass --yes", name)
	}
	l, err := landing.ListTree(t)
	if err != nil {
		return failErr(stderr, name, err)
	}
	if len(l.Items) == 0 || l.Items[0].Position == nil {
		return failErr(stderr, name, landing.ErrEmpty)
	}
	h := l.Items[0]
	if b := l.Batch; b != nil {
		slugs := make([]string, len(b.Slugs))
		for i, s := range b.Slugs {
			slugs[i] = cell(s)
		}
		fmt.Fprintf(stdout, "land a batch of %d (%s) as %.12s onto %s? [y/N] ", len(slugs), strings.Join(slugs, ", "), b.Candidate, cell(l.Integration))
	} else {
		fmt.Fprintf(stdout, "land %s at %.12s onto %s (%s)? [y/N] ", cell(h.Slug), h.Commit, cell(l.Integration), cell(string(h.State)))
	}
	answer, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	if a := strings.TrimSpace(strings.ToLower(answer)); a != "y" && a != "yes" {
		return fail(stderr, exitNothing, "%s: not landed", name)
	}
	return -1
}

func queueSendBackCmd() *cobra.Command {
	return leaf("send-back SLUG", "return an entry to its worker's lane with the note or conflict; its approval is void", func(fs *pflag.FlagSet) body {
		var q queueFlags
		var note string
		q.register(fs, "send-back", true)
		fs.StringVar(&note, "note", "", "what to change, under ## Review notes")
		return func(pos []string, stdout, stderr io.Writer) int {
			t, code := q.open(pos, 1, stderr)
			if code >= 0 {
				return code
			}
			rel, err := landing.SendBack(t, pos[0], note, q.agent)
			if err != nil {
				return failErr(stderr, q.name, err)
			}
			fmt.Fprintln(stdout, t.Abs(rel))
			return exitOK
		}
	})
}

func queueAcceptCmd() *cobra.Command {
	c := queueAcceptLeaf()
	c.Long = `Takes the integration branch's tip as your own move: a commit you made on it
(fleetwatch.yaml, plan moves) or a push you know of. The queue records the tip as
where it left the branch, so check, queue list, queue land and the Merge pane stop
warning that it moved outside the queue, until the next move nobody explained.
With COMMIT, it accepts only while the tip is that commit. Exit 1 when there is
nothing to accept; an agent's run is refused.`
	c.Example = `  fleetwatch queue accept            # the move check warns of was mine
  fleetwatch queue accept 3f2a9c1    # only while the tip is 3f2a9c1`
	return c
}

func queueAcceptLeaf() *cobra.Command {
	return leaf("accept [COMMIT]", "take the integration branch's tip as your own move; the moved-outside alarm stops", func(fs *pflag.FlagSet) body {
		var q queueFlags
		q.register(fs, "accept", true)
		return func(pos []string, stdout, stderr io.Writer) int {
			expect := ""
			if len(pos) > 0 {
				expect, pos = pos[0], pos[1:]
			}
			t, code := q.open(pos, 0, stderr)
			if code >= 0 {
				return code
			}
			a, err := landing.Accept(t, expect, q.agent)
			if errors.Is(err, landing.ErrNothingToAccept) {
				return fail(stderr, exitNothing, "%s: %v", q.name, err)
			}
			if err != nil {
				return failErr(stderr, q.name, err)
			}
			fmt.Fprintf(stdout, "accepted %s at %.12s as your own move (the queue had left it at %.12s); the next landing builds on it\n", cell(a.Branch), a.To, a.From)
			return exitOK
		}
	})
}
