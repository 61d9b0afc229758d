package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/boardtext"
	"github.com/fleetwatch/fleetwatch/workers/coord"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

const inboxLong = `Lists the plan-first plans the coordinator's inbox holds: proposals waiting for
approve or reject, and decided ones waiting for their agent's next run; then the
runs paused where they are (at their budget, or by hand), with what to do about them;
then the runs waiting for input (a conversation's agent asked a question or for
permission), with the command that answers.
Columns: slug, agent, proposal number, state, age, scope (its Files in scope lines).
An empty inbox prints nothing on stdout and "inbox is empty" on stderr; exit 0 either
way (2 on an error). --json prints an array of entries ([] when empty).`

const approveLong = `Approves SLUG's waiting proposal as you (FLEET_AGENT_ID, else operator-$USER).
Only the text the plan's own agent wrote is approved: the driver recorded its sha256
when the plan turn ended, and a file changed since is refused. The agent cannot
approve its own proposal. --edit opens a copy in $VISUAL or $EDITOR; the edited text is
what gets approved, recorded as yours. The agent's next --run builds with
FLEET_APPROVED_PLAN naming the approved text. Exit 0 approved, 2 refused or error.`

const rejectLong = `Sends SLUG's waiting proposal back with --note (required); the agent's next --run
plans again with FLEET_FEEDBACK naming a file holding the note. Exit 0, 2 refused or error.`

// inboxFlags are what inbox, approve and reject take.
type inboxFlags struct {
	root, agent string
}

func (f *inboxFlags) register(fs *pflag.FlagSet) {
	rootFlag(fs, &f.root, rootHelp)
	agentFlag(fs, &f.agent, operatorAgentID(), "who decides, for the event log")
}

func (f *inboxFlags) open(name string, pos []string, want int, stderr io.Writer) (*planfs.Tree, int) {
	if len(pos) != want {
		if want == 0 {
			return nil, fail(stderr, exitError, "%s: unexpected argument %q", name, pos[0])
		}
		return nil, fail(stderr, exitError, "%s: want exactly one slug, got %d", name, len(pos))
	}
	t, err := planfs.Open(findRoot(f.root))
	if err != nil {
		return nil, failErr(stderr, name, err)
	}
	return t, -1
}

func (f *inboxFlags) approver() coord.Approver { return coord.Approver{AgentID: f.agent} }

func withLong(c *cobra.Command, long string) *cobra.Command {
	c.Long = c.Short + "\n\n" + long
	return c
}

func inboxCmd() *cobra.Command {
	return withLong(leaf("inbox", "what waits for a person: proposals, paused runs, questions", func(fs *pflag.FlagSet) body {
		var f inboxFlags
		var jsonOut bool
		rootFlag(fs, &f.root, rootHelp)
		fs.BoolVar(&jsonOut, "json", false, "an array of entries (the machine contract)")
		return func(pos []string, stdout, stderr io.Writer) int {
			t, code := f.open("inbox", pos, 0, stderr)
			if code >= 0 {
				return code
			}
			entries, err := coord.Inbox(t)
			if err != nil {
				return failErr(stderr, "inbox", err)
			}
			paused, asking := look.PausedRuns(t.Project), askingRuns(t.Project)
			if jsonOut {
				return printInboxJSON(stdout, stderr, entries, paused, asking)
			}
			if len(entries) == 0 && len(paused) == 0 && len(asking) == 0 {
				say(stderr, "inbox is empty")
				return exitOK
			}
			printInbox(stdout, entries, paused, asking, time.Now())
			return exitOK
		}
	}), inboxLong)
}

// inboxState is an entry's state in a word or three.
func inboxState(e coord.Entry) string {
	switch {
	case e.Decision != nil:
		return e.Decision.Verdict + " by " + e.Decision.By
	case e.Problem != "":
		return "refused: " + e.Problem
	}
	return "awaiting approval"
}

func printInbox(stdout io.Writer, entries []coord.Entry, paused, asking []look.State, now time.Time) {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLUG\tAGENT\tN\tSTATE\tAGE\tSCOPE")
	for _, e := range entries {
		age := "-"
		if e.Record != nil {
			age = boardtext.LeftText(now.Sub(e.Record.At).Seconds())
		}
		scope := "(no Files in scope section)"
		if e.ScopeFound {
			scope = strings.Join(e.Scope.Patterns, ", ")
		}
		inboxRow(tw, e.Slug, e.Lease.AgentID, strconv.Itoa(e.N), inboxState(e), age, scope)
	}
	for _, st := range paused {
		slug := pausedSlug(st)
		inboxRow(tw, slug, st.AgentID, "-", st.Paused, boardtext.LeftText(now.Sub(st.PausedAt.Time).Seconds()), pausedHint(st, slug))
	}
	for _, st := range asking {
		a := st.Asking
		inboxRow(tw, pausedSlug(st), st.AgentID, "-", "waiting for input: "+claims.Clip(a.Question, 120),
			boardtext.LeftText(now.Sub(time.Unix(0, int64(a.Since*1e9))).Seconds()), answerHint(st))
	}
	tw.Flush()
}

func inboxRow(w io.Writer, cells ...string) {
	for i, c := range cells {
		cells[i] = termtext.Line(c)
	}
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

func pausedSlug(st look.State) string { return model.SlugOf(path.Base(st.Plan)) }

// pausedHint is what a person can do about a paused run.
func pausedHint(st look.State, slug string) string {
	if strings.HasPrefix(st.Paused, "budget") {
		return "fleetwatch budget extend " + slug + " --by …, or worker stop " + st.AgentID
	}
	return "fleetwatch worker resume " + st.AgentID
}

// askingRuns are the runs of project's workers waiting for input: the
// question their conversation's agent asked, which their driver put in
// the state file until a person answers.
func askingRuns(project string) []look.State {
	states, _ := look.ReadStates(project)
	var out []look.State
	now := time.Now()
	for _, st := range states {
		// A driver that died asking took its question with it.
		if st.State == look.StateRunning && st.Asking != nil && st.Health(now) != look.Dead {
			out = append(out, st)
		}
	}
	return out
}

// answerHint is the command that answers a waiting run: a permission
// request takes --allow or --deny (or --option), a question words.
func answerHint(st look.State) string {
	if len(st.Asking.Options) > 0 {
		return "fleetwatch answer " + st.AgentID + " --allow|--deny|--option ID"
	}
	return "fleetwatch answer " + st.AgentID + " TEXT"
}

type inboxEntryJSON struct {
	Slug       string          `json:"slug"`
	Plan       string          `json:"plan"`
	Title      string          `json:"title"`
	AgentID    string          `json:"agent_id"`
	Awaiting   string          `json:"awaiting"`
	State      string          `json:"state"`
	N          int             `json:"n"`
	Proposal   string          `json:"proposal"`
	Record     *coord.Record   `json:"record"`
	Decision   *coord.Decision `json:"decision"`
	Scope      []string        `json:"scope"`
	ScopeFound bool            `json:"scope_found"`
	Problem    string          `json:"problem,omitempty"`
	// Kind is proposal; paused: a run stopped where it is at its budget
	// or by hand, waiting for a person; or asking: a run waiting for
	// input, its question in Asking and the command that answers in
	// Answer.
	Kind   string            `json:"kind"`
	Asking *claims.AskRecord `json:"asking,omitempty"`
	Answer string            `json:"answer,omitempty"`
}

func printInboxJSON(stdout, stderr io.Writer, entries []coord.Entry, paused, asking []look.State) int {
	out := make([]inboxEntryJSON, 0, len(entries)+len(paused)+len(asking))
	for _, e := range entries {
		out = append(out, inboxEntryJSON{Slug: e.Slug, Plan: e.Rel, Title: e.Title, AgentID: e.Lease.AgentID,
			Awaiting: e.Lease.Awaiting, State: inboxState(e), N: e.N, Proposal: e.Proposal, Record: e.Record,
			Decision: e.Decision, Scope: append([]string{}, e.Scope.Patterns...), ScopeFound: e.ScopeFound, Problem: e.Problem, Kind: "proposal"})
	}
	for _, st := range paused {
		out = append(out, inboxEntryJSON{Slug: pausedSlug(st), Plan: st.Plan, AgentID: st.AgentID, State: st.Paused, Scope: []string{}, Kind: "paused"})
	}
	for _, st := range asking {
		out = append(out, inboxEntryJSON{Slug: pausedSlug(st), Plan: st.Plan, AgentID: st.AgentID, State: "waiting for input",
			Scope: []string{}, Kind: "asking", Asking: st.Asking, Answer: answerHint(st)})
	}
	if err := encodeJSON(stdout, out, ""); err != nil {
		return failErr(stderr, "inbox: writing JSON", err)
	}
	return exitOK
}

func approveCmd() *cobra.Command {
	return withLong(leaf("approve SLUG", "approve a plan-first proposal; its agent then builds it", func(fs *pflag.FlagSet) body {
		var f inboxFlags
		var edit bool
		f.register(fs)
		fs.BoolVar(&edit, "edit", false, "edit the proposal in $VISUAL/$EDITOR and approve your text")
		return func(pos []string, stdout, stderr io.Writer) int {
			t, code := f.open("approve", pos, 1, stderr)
			if code >= 0 {
				return code
			}
			var edited []byte
			if edit {
				var err error
				if edited, err = editProposal(t, pos[0]); err != nil {
					return failErr(stderr, "approve --edit", err)
				}
			}
			d, err := coord.Approve(t, pos[0], f.approver(), edited)
			if err != nil {
				return failErr(stderr, "approve", err)
			}
			how := ""
			if d.Edited {
				how = ", as you edited it"
			}
			fmt.Fprintf(stdout, "approved %s proposal %d%s: %s\n", cell(d.Slug), d.N, cell(how), cell(d.Text))
			return exitOK
		}
	}), approveLong)
}

// editProposal opens a copy of slug's waiting proposal (under var/fleet/run/
// edits/) in the operator's editor and returns the text it holds after;
// nil when it is unchanged, which approves the agent's own text.
func editProposal(t *planfs.Tree, slug string) ([]byte, error) {
	entry, err := waitingEntry(t, slug)
	if err != nil {
		return nil, err
	}
	words, err := proc.Editor(os.Getenv)
	if err != nil {
		return nil, err
	}
	text, _, err := coord.ReadProposal(*entry)
	if err != nil {
		return nil, err
	}
	rel := fmt.Sprintf("%s/edits/%s-%d.md", coord.RunDir, slug, entry.N)
	name, err := writeCopy(t, rel, text)
	if err != nil {
		return nil, err
	}
	cmd := proc.EditorCmd(words, name)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("editor %s: %v (the copy is %s)", words[0], err, name)
	}
	g, err := safepath.OpenFile(t.Project, rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	got, err := io.ReadAll(io.LimitReader(g, coord.MaxProposal+1))
	if err != nil {
		return nil, err
	}
	if bytes.Equal(got, []byte(text)) {
		return nil, nil
	}
	return got, nil
}

// waitingEntry is slug's last inbox entry waiting for an answer.
func waitingEntry(t *planfs.Tree, slug string) (*coord.Entry, error) {
	var entry *coord.Entry
	entries, err := coord.Inbox(t)
	if err != nil {
		return nil, err
	}
	for i := range entries {
		if entries[i].Slug == slug && entries[i].Waiting() {
			entry = &entries[i]
		}
	}
	if entry == nil {
		return nil, fmt.Errorf("%s: %v", slug, coord.ErrNotWaiting)
	}
	return entry, nil
}

// writeCopy writes text to rel under the project, and names the file.
func writeCopy(t *planfs.Tree, rel, text string) (string, error) {
	f, err := safepath.OpenFile(t.Project, rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return f.Name(), err
}

func rejectCmd() *cobra.Command {
	return withLong(leaf("reject SLUG", "send a plan-first proposal back with a note; its agent plans again", func(fs *pflag.FlagSet) body {
		var f inboxFlags
		var note string
		f.register(fs)
		fs.StringVar(&note, "note", "", "what to change (required)")
		return func(pos []string, stdout, stderr io.Writer) int {
			if strings.TrimSpace(note) == "" {
				return fail(stderr, exitError, "reject: --note is required: say what the agent should change")
			}
			t, code := f.open("reject", pos, 1, stderr)
			if code >= 0 {
				return code
			}
			d, err := coord.Reject(t, pos[0], note, f.approver())
			if err != nil {
				return failErr(stderr, "reject", err)
			}
			fmt.Fprintf(stdout, "rejected %s proposal %d: %s\n", cell(d.Slug), d.N, cell(d.Feedback))
			return exitOK
		}
	}), rejectLong)
}
