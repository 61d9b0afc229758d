package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"fleetwatch/internal/termtext"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// boardColumn is one kanban column: a title and the lanes it gathers.
type boardColumn struct {
	title string
	lanes []model.Lane
	color string // SGR parameters, as anchor's plan_board colours the column
}

func boardColumns(parked bool, c256 bool) []boardColumn {
	orange := "91"
	if c256 {
		orange = "38;5;208"
	}
	cols := []boardColumn{
		{"Drafts", []model.Lane{model.Drafts}, "31"},
		{"Ready", []model.Lane{model.Bugs, model.Features}, "31"},
		{"In Progress", []model.Lane{model.InProgress}, orange},
		{"Review Needed", []model.Lane{model.ReviewNeeded}, "33"},
		{"Completed", []model.Lane{model.Completed}, "32"},
	}
	if parked {
		cols = append(cols, boardColumn{"Ambiguous", []model.Lane{model.Ambiguous}, "31"},
			boardColumn{"Blocked", []model.Lane{model.Blocked}, "31"})
	}
	return cols
}

// boardFlags are board's flags.
type boardFlags struct {
	common
	once, asJSON, parked, noColor bool
	width                         int
}

func boardCmd() *cobra.Command {
	var f boardFlags
	return leaf("board", "print the lanes as a kanban (--once) or as JSON (--json)", func(fs *pflag.FlagSet) body {
		f.registerRoot(fs)
		fs.StringVar(&f.root, "project", "", "same as --root (anchor's plan_board name)")
		fs.BoolVar(&f.once, "once", false, "print one frame and exit (default: print a new frame on every change)")
		fs.BoolVar(&f.asJSON, "json", false, "print the board as JSON and exit")
		fs.BoolVar(&f.parked, "include-parked", false, "add the Ambiguous and Blocked columns")
		fs.BoolVar(&f.noColor, "no-color", false, "no colour even on a terminal")
		fs.IntVar(&f.width, "width", 0, "columns to fit (default: the terminal's, else 100)")
		return f.run
	})
}

func (f *boardFlags) run(pos []string, stdout, stderr io.Writer) int {
	if len(pos) > 0 {
		return fail(stderr, exitError, "board: unexpected argument %q (the project is --root DIR)", pos[0])
	}
	if f.width < 0 {
		return fail(stderr, exitError, "--width must be positive, not %d", f.width)
	}
	t, err := planfs.Open(findRoot(f.root))
	if err != nil {
		// No tree is exit 2 as with every other command (anchor's
		// plan_board said 1, which scripts read as "nothing to do").
		return fail(stderr, exitError, "%v", err)
	}
	out, isFile := stdout.(*os.File)
	tty := isFile && term.IsTerminal(int(out.Fd()))
	if f.width == 0 {
		f.width = 100
		if tty {
			if w, _, err := term.GetSize(int(out.Fd())); err == nil && w > 0 {
				f.width = w
			}
		}
	}
	color := tty && !f.noColor && os.Getenv("NO_COLOR") == ""
	c256 := strings.Contains(os.Getenv("TERM"), "256color") || os.Getenv("COLORTERM") != ""
	b, now, err := boardFrame(t)
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(boardJSON(t, b, now)); err != nil {
			return fail(stderr, exitError, "%v", err)
		}
		return exitOK
	}
	cols := boardColumns(f.parked, c256)
	events, _ := t.RecentEvents(5000)
	fmt.Fprint(stdout, renderBoard(b, cols, events, now, f.width, color))
	if f.once {
		return exitOK
	}
	return f.follow(t, b, cols, tty, color, stdout, stderr)
}

// boardFrame is one board: ranked as the next claim will see it; the
// leases are the files there are.
func boardFrame(t *planfs.Tree) (*model.Board, float64, error) {
	snap, err := t.Scan()
	if err != nil {
		return nil, 0, err
	}
	preview, _ := t.Preview(snap)
	now := t.NowSeconds()
	b := model.NewBoard(preview, model.Options{Now: now, History: t.History()})
	b.Leases = snap.Leases
	b.Warnings = append(b.Warnings, workers.SymlinkProblems(t.Project)...)
	return b, now, nil
}

// follow prints a new frame, and the moves since the last, on every change.
func (f *boardFlags) follow(t *planfs.Tree, prev *model.Board, cols []boardColumn, tty, color bool, stdout, stderr io.Writer) int {
	w, err := t.Watch(200 * time.Millisecond)
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	defer w.Close()
	for ch := range w.Changes() {
		if ch.Err != nil {
			say(stderr, "%v", ch.Err)
			continue
		}
		next, now, err := boardFrame(t)
		if err != nil {
			say(stderr, "%v", err)
			continue
		}
		if tty {
			fmt.Fprint(stdout, "\x1b[H\x1b[2J")
		}
		events, _ := t.RecentEvents(5000)
		fmt.Fprint(stdout, renderBoard(next, cols, events, now, f.width, color))
		for _, line := range moves(prev, next, cols) {
			fmt.Fprintln(stdout, line)
		}
		prev = next
	}
	return exitOK
}

// renderBoard draws the kanban: one column per lane group, each card the
// slug, title, `[P1/high]` and who holds it or why it waits.
func renderBoard(b *model.Board, cols []boardColumn, events []planfs.Event, now float64, width int, color bool) string {
	colW := width/len(cols) - 1
	cells := make([][]string, len(cols))
	for i, col := range cols {
		n := 0
		for _, l := range col.lanes {
			for _, r := range b.Lane(l) {
				n++
				cells[i] = append(cells[i], card(&r, now)...)
			}
		}
		head := fmt.Sprintf("── %s (%d) ──", col.title, n)
		if color {
			head = "\x1b[" + col.color + "m" + head + "\x1b[0m"
		}
		cells[i] = append([]string{head}, cells[i]...)
	}
	var out strings.Builder
	done, processed := weekCounts(events, now)
	fmt.Fprintf(&out, "Completed (7d): %d   Processed (7d): %d\n\n", done, processed)
	if colW < 14 {
		// Too narrow for columns side by side: one after another.
		for _, c := range cells {
			for _, line := range c {
				out.WriteString(strings.TrimRight(padCell(line, width), " ") + "\n")
			}
		}
		return out.String()
	}
	rows := 0
	for _, c := range cells {
		rows = max(rows, len(c))
	}
	for i := range rows {
		var line strings.Builder
		for j, c := range cells {
			cell := ""
			if i < len(c) {
				cell = c[i]
			}
			if j < len(cells)-1 {
				cell = padCell(cell, colW) + " "
			} else {
				cell = ansi.Truncate(cell, colW, "…")
			}
			line.WriteString(cell)
		}
		out.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return out.String()
}

func padCell(s string, w int) string {
	if ansi.StringWidth(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-ansi.StringWidth(s))
}

// card is one plan's lines in the kanban. Text from the files has its
// control characters replaced: an escape sequence in a title must not
// reach the terminal.
func card(r *model.BoardRow, now float64) []string {
	lines := cardLines(r, now)
	for i, l := range lines {
		lines[i] = termtext.Line(l)
	}
	return lines
}

func cardLines(r *model.BoardRow, now float64) []string {
	h := &r.Plan.Header
	lines := []string{r.Plan.Slug}
	if h.Title != "" {
		lines = append(lines, h.Title)
	}
	lines = append(lines, "["+h.Priority+"/"+h.Value+"]")
	switch l := r.Lease; {
	case l != nil && l.Corrupt != "":
		lines = append(lines, "↳ lease unreadable")
	case l != nil && l.AwaitingText() != "":
		lines = append(lines, "↳ "+l.AgentID+", "+l.AwaitingText())
	case l != nil && l.Active(now):
		lines = append(lines, "↳ "+l.AgentID+", "+leftText(l.ExpiresAt-now)+" left")
	case l != nil:
		lines = append(lines, "↳ lease EXPIRED ("+l.AgentID+")")
	case r.Person() != "":
		lines = append(lines, "↳ for "+r.Person())
	case r.Plan.Lane.Ready() && !r.Deps.Met:
		lines = append(lines, "↳ UNMET "+model.UnmetList(r.Deps))
	}
	return append(lines, "")
}

// leftText is a lease's time left, rounded down: 42s, 12m, 3h05m.
func leftText(sec float64) string {
	s := int64(sec)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm", s/60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
}

// weekCounts counts plans that reached completed/ and those that reached
// completed/ or review-needed/ in the last seven days.
func weekCounts(events []planfs.Event, now float64) (done, processed int) {
	since := now - 7*86400
	for _, e := range events {
		ts, err := time.Parse(time.RFC3339Nano, e.TS)
		if err != nil || float64(ts.Unix()) < since {
			continue
		}
		switch {
		case strings.HasPrefix(e.To, string(model.Completed)+"/"):
			done++
			processed++
		case strings.HasPrefix(e.To, string(model.ReviewNeeded)+"/"):
			processed++
		}
	}
	return done, processed
}

// moves lists plans that changed column between two frames.
func moves(prev, next *model.Board, cols []boardColumn) []string {
	colOf := func(b *model.Board) map[string]string {
		out := map[string]string{}
		for _, c := range cols {
			for _, l := range c.lanes {
				for _, r := range b.Lane(l) {
					out[r.Plan.Slug] = c.title
				}
			}
		}
		return out
	}
	before, after := colOf(prev), colOf(next)
	var out []string
	for _, r := range next.Rows {
		if a, b := before[r.Plan.Slug], after[r.Plan.Slug]; a != "" && b != "" && a != b {
			out = append(out, fmt.Sprintf("→ %s moved: %s → %s", r.Plan.Slug, a, b))
		}
	}
	return out
}

type boardTierJSON struct {
	Fit model.Fit `json:"fit"`
	// Rank is null where the tier will not take the plan, as in
	// `work-once --list --json`.
	Rank   *int   `json:"rank"`
	Reason string `json:"reason,omitempty"`
}

type boardLeaseJSON struct {
	Plan      string  `json:"plan"`
	AgentID   string  `json:"agent_id"`
	ClaimedAt float64 `json:"claimed_at"`
	ExpiresAt float64 `json:"expires_at"`
	Origin    string  `json:"origin,omitempty"`
	Active    bool    `json:"active"`
	Corrupt   string  `json:"corrupt,omitempty"`
	// Awaiting and AwaitingText as in work-once --list --json.
	Awaiting     string `json:"awaiting,omitempty"`
	AwaitingText string `json:"awaiting_text,omitempty"`
}

type boardPlanJSON struct {
	Path      string                   `json:"path"`
	Slug      string                   `json:"slug"`
	Title     string                   `json:"title"`
	Priority  string                   `json:"priority"`
	Value     string                   `json:"value"`
	Preferred []string                 `json:"preferred"`
	Person    string                   `json:"person,omitempty"`
	Deps      model.DepStatus          `json:"deps"`
	Lease     *boardLeaseJSON          `json:"lease"`
	Tiers     map[string]boardTierJSON `json:"tiers"`
	// Problem says why workers skip the plan whatever their tier: a name
	// too long for its lease, or (for workers that make its branch) a
	// branch name git refuses.
	Problem string `json:"problem,omitempty"`
}

type boardLaneJSON struct {
	Lane  string          `json:"lane"`
	Count int             `json:"count"`
	Plans []boardPlanJSON `json:"plans"`
}

type boardJSONDoc struct {
	Project  string           `json:"project"`
	Now      float64          `json:"now"`
	Lanes    []boardLaneJSON  `json:"lanes"`
	Leases   []boardLeaseJSON `json:"leases"`
	Warnings []model.Warning  `json:"warnings"`
}

func boardLease(l *model.Lease, now float64) boardLeaseJSON {
	return boardLeaseJSON{Plan: l.Rel, AgentID: l.AgentID, ClaimedAt: l.ClaimedAt, ExpiresAt: l.ExpiresAt,
		Origin: l.Origin, Active: l.Active(now), Corrupt: l.Corrupt, Awaiting: l.Awaiting, AwaitingText: l.AwaitingText()}
}

// boardJSON is the board as scripts read it: every lane, every plan with
// its rank per tier, every lease.
func boardJSON(t *planfs.Tree, b *model.Board, now float64) boardJSONDoc {
	doc := boardJSONDoc{Project: t.Project, Now: now, Lanes: []boardLaneJSON{}, Leases: []boardLeaseJSON{}, Warnings: b.Warnings}
	if doc.Warnings == nil {
		doc.Warnings = []model.Warning{}
	}
	for _, l := range model.Lanes {
		lane := boardLaneJSON{Lane: string(l), Count: b.Counts[l], Plans: []boardPlanJSON{}}
		for _, r := range b.Lane(l) {
			h := &r.Plan.Header
			p := boardPlanJSON{Path: r.Plan.Rel, Slug: r.Plan.Slug, Title: h.Title, Priority: h.Priority, Value: h.Value,
				Preferred: h.Preferred, Person: r.Person(), Deps: r.Deps, Tiers: map[string]boardTierJSON{}}
			if l != model.Completed {
				p.Problem = model.ClaimProblem(r.Plan, true)
			}
			if p.Preferred == nil {
				p.Preferred = []string{}
			}
			if p.Deps.Unmet == nil {
				p.Deps.Unmet = []model.Unmet{}
			}
			if r.Lease != nil {
				lj := boardLease(r.Lease, now)
				p.Lease = &lj
			}
			for k, tier := range model.Tiers {
				c := r.Tiers[k]
				tj := boardTierJSON{Fit: c.Fit, Reason: c.Reason}
				if c.Rank > 0 {
					rank := c.Rank
					tj.Rank = &rank
				}
				p.Tiers[tier.String()] = tj
			}
			lane.Plans = append(lane.Plans, p)
		}
		doc.Lanes = append(doc.Lanes, lane)
	}
	for i := range b.Leases {
		doc.Leases = append(doc.Leases, boardLease(&b.Leases[i], now))
	}
	return doc
}
