// Package boardtext draws the board as text and as JSON, as `fleetwatch
// board` prints it and as `fleetwatch serve` answers a session without a
// terminal: one rendering for both.
package boardtext

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Column is one kanban column: a title and the lanes it gathers.
type Column struct {
	Title string
	Lanes []model.Lane
	Color string // SGR parameters, as anchor's plan_board colours the column
}

// Columns are the kanban's columns; parked adds Ambiguous and Blocked, c256
// picks the 256-colour orange.
func Columns(parked bool, c256 bool) []Column {
	orange := "91"
	if c256 {
		orange = "38;5;208"
	}
	cols := []Column{
		{"Drafts", []model.Lane{model.Drafts}, "31"},
		{"Ready", []model.Lane{model.Bugs, model.Features}, "31"},
		{"In Progress", []model.Lane{model.InProgress}, orange},
		{"Review Needed", []model.Lane{model.ReviewNeeded}, "33"},
		{"Completed", []model.Lane{model.Completed}, "32"},
	}
	if parked {
		cols = append(cols, Column{"Ambiguous", []model.Lane{model.Ambiguous}, "31"},
			Column{"Blocked", []model.Lane{model.Blocked}, "31"})
	}
	return cols
}

// Frame is one board: ranked as the next claim will see it; the
// leases are the files there are.
func Frame(t *planfs.Tree) (*model.Board, float64, error) {
	snap, err := t.Scan()
	if err != nil {
		return nil, 0, err
	}
	preview, _ := t.Preview(snap)
	now := t.NowSeconds()
	b := model.NewBoard(preview, model.Options{Now: now, History: t.History()})
	b.Leases = snap.Leases
	b.Warnings = append(b.Warnings, look.BoardProblems(t.Project)...)
	b.Warnings = append(b.Warnings, look.CapWarnings(t.Project, b.Leases, now)...)
	return b, now, nil
}

// columnCells are col's lines, its heading first, and which of them are
// a card's title.
func columnCells(b *model.Board, col Column, now float64, color bool) ([]string, map[int]bool) {
	var cells []string
	titles := map[int]bool{}
	n := 0
	for _, l := range col.Lanes {
		for _, r := range b.Lane(l) {
			n++
			if r.Plan.Header.Title != "" {
				titles[len(cells)+2] = true // after the heading and the slug
			}
			cells = append(cells, card(&r, now)...)
		}
	}
	head := fmt.Sprintf("── %s (%d) ──", col.Title, n)
	if color {
		head = "\x1b[" + col.Color + "m" + head + "\x1b[0m"
	}
	return append([]string{head}, cells...), titles
}

// Render draws the kanban: one column per lane group, each card the
// slug, title, `[P1/high]` and who holds it or why it waits.
func Render(b *model.Board, cols []Column, events []planfs.Event, now float64, width int, color bool) string {
	cells := make([][]string, len(cols))
	// titles marks the lines that are a title: the only ones cut when
	// the columns fit otherwise.
	titles := make([]map[int]bool, len(cols))
	for i, col := range cols {
		cells[i], titles[i] = columnCells(b, col, now, color)
	}
	var out strings.Builder
	done, processed := weekCounts(events, now)
	fmt.Fprintf(&out, "Completed (7d): %d   Processed (7d): %d\n\n", done, processed)
	widths := columnWidths(cells, titles, width)
	if widths == nil {
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
			line.WriteString(padCell(cell, widths[j]) + " ")
		}
		out.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return out.String()
}

// columnWidths sizes the columns side by side in width cells, one between
// each: every column as wide as its widest line that is not a title,
// then the room left to the columns whose titles want it, shared evenly.
// Lines that do not fit that way share the width evenly, cut where they
// must; nil when even that is too narrow.
func columnWidths(cells [][]string, titles []map[int]bool, width int) []int {
	n := len(cells)
	even := width/n - 1
	if even < 14 {
		return nil
	}
	need, want := make([]int, n), make([]int, n)
	room := width - (n - 1)
	for i, c := range cells {
		for k, line := range c {
			w := ansi.StringWidth(line)
			if titles[i][k] {
				want[i] = max(want[i], w)
			} else {
				need[i] = max(need[i], w)
			}
		}
		room -= need[i]
	}
	if room < 0 {
		widths := make([]int, n)
		for i := range widths {
			widths[i] = even
		}
		return widths
	}
	// Titles take what is left, an even share at a time, so a long one
	// does not starve the others.
	widths := need
	for room > 0 {
		var short []int
		for i := range widths {
			if widths[i] < want[i] {
				short = append(short, i)
			}
		}
		if len(short) == 0 {
			break
		}
		share := max(1, room/len(short))
		for _, i := range short {
			give := min(share, want[i]-widths[i], room)
			widths[i] += give
			room -= give
		}
	}
	return widths
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
		lines = append(lines, "↳ "+l.AgentID+", "+LeftText(l.ExpiresAt-now)+" left")
		lines = append(lines, heldOn(l)...)
	case l != nil:
		lines = append(lines, "↳ lease EXPIRED ("+l.AgentID+")")
		lines = append(lines, heldOn(l)...)
	case r.Person() != "":
		lines = append(lines, "↳ for "+r.Person())
	case r.Plan.Lane.Ready() && !r.Deps.Met:
		lines = append(lines, "↳ UNMET "+model.UnmetList(r.Deps))
	}
	return append(lines, "")
}

// LeftText is a lease's time left, rounded down: 42s, 12m, 3h05m.
func LeftText(sec float64) string {
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

// Moves lists plans that changed column between two frames.
func Moves(prev, next *model.Board, cols []Column) []string {
	colOf := func(b *model.Board) map[string]string {
		out := map[string]string{}
		for _, c := range cols {
			for _, l := range c.Lanes {
				for _, r := range b.Lane(l) {
					out[r.Plan.Slug] = c.Title
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

type tierJSON struct {
	Fit model.Fit `json:"fit"`
	// Rank is null where the tier will not take the plan, as in
	// `work-once --list --json`.
	Rank   *int   `json:"rank"`
	Reason string `json:"reason,omitempty"`
}

type leaseJSON struct {
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
	// Host is where the holder runs; Backend the remote claims backend
	// the lease was read from ("git", "etcd"), absent for a lease file.
	Host    string `json:"host,omitempty"`
	Backend string `json:"backend,omitempty"`
}

type planJSON struct {
	Path      string              `json:"path"`
	Slug      string              `json:"slug"`
	Title     string              `json:"title"`
	Priority  string              `json:"priority"`
	Value     string              `json:"value"`
	Preferred []string            `json:"preferred"`
	Person    string              `json:"person,omitempty"`
	Deps      model.DepStatus     `json:"deps"`
	Lease     *leaseJSON          `json:"lease"`
	Tiers     map[string]tierJSON `json:"tiers"`
	// Problem says why workers skip the plan whatever their tier: a name
	// too long for its lease, or (for workers that make its branch) a
	// branch name git refuses.
	Problem string `json:"problem,omitempty"`
}

type laneJSON struct {
	Lane  string     `json:"lane"`
	Count int        `json:"count"`
	Plans []planJSON `json:"plans"`
}

// Doc is `board --json`'s document.
type Doc struct {
	Project  string          `json:"project"`
	Now      float64         `json:"now"`
	Lanes    []laneJSON      `json:"lanes"`
	Leases   []leaseJSON     `json:"leases"`
	Warnings []model.Warning `json:"warnings"`
	// Claims is the remote claims backend the board was read from;
	// absent for the local lease files.
	Claims *ClaimsDoc `json:"claims,omitempty"`
}

// ClaimsDoc says where a remote board was read and how old it is.
type ClaimsDoc struct {
	Backend string  `json:"backend"`
	Where   string  `json:"where"`
	ReadAt  float64 `json:"read_at"`
	Tip     string  `json:"tip,omitempty"`
	// Error is why the last read failed; the board is the last good one.
	Error string `json:"error,omitempty"`
}

func leaseDoc(l *model.Lease, now float64) leaseJSON {
	return leaseJSON{Plan: l.Rel, AgentID: l.AgentID, ClaimedAt: l.ClaimedAt, ExpiresAt: l.ExpiresAt,
		Origin: l.Origin, Active: l.Active(now), Corrupt: l.Corrupt, Awaiting: l.Awaiting, AwaitingText: l.AwaitingText(),
		Host: l.Host, Backend: l.Backend}
}

// JSON is the board as scripts read it: every lane, every plan with
// its rank per tier, every lease.
func JSON(t *planfs.Tree, b *model.Board, now float64) Doc {
	doc := Doc{Project: t.Project, Now: now, Lanes: []laneJSON{}, Leases: []leaseJSON{}, Warnings: b.Warnings}
	if doc.Warnings == nil {
		doc.Warnings = []model.Warning{}
	}
	for _, l := range model.Lanes {
		lane := laneJSON{Lane: string(l), Count: b.Counts[l], Plans: []planJSON{}}
		for _, r := range b.Lane(l) {
			h := &r.Plan.Header
			p := planJSON{Path: r.Plan.Rel, Slug: r.Plan.Slug, Title: h.Title, Priority: h.Priority, Value: h.Value,
				Preferred: h.Preferred, Person: r.Person(), Deps: r.Deps, Tiers: map[string]tierJSON{}}
			if l != model.Completed {
				p.Problem = r.Problem
			}
			if p.Preferred == nil {
				p.Preferred = []string{}
			}
			if p.Deps.Unmet == nil {
				p.Deps.Unmet = []model.Unmet{}
			}
			if r.Lease != nil {
				lj := leaseDoc(r.Lease, now)
				p.Lease = &lj
			}
			for k, tier := range model.Tiers {
				c := r.Tiers[k]
				tj := tierJSON{Fit: c.Fit, Reason: c.Reason}
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
		doc.Leases = append(doc.Leases, leaseDoc(&b.Leases[i], now))
	}
	return doc
}

// Text is `board --once` without colour at width columns: what a script
// reading the board over SSH gets.
func Text(t *planfs.Tree, width int) (string, error) {
	b, now, err := Frame(t)
	if err != nil {
		return "", err
	}
	events, _ := t.RecentEvents(5000)
	return Render(b, Columns(false, false), events, now, width, false), nil
}

// WriteJSON writes `board --json`'s document to w.
func WriteJSON(w io.Writer, t *planfs.Tree) error {
	b, now, err := Frame(t)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(JSON(t, b, now))
}

// heldOn is a card's line "  held on <host>" for a lease read from a
// remote backend (a line of its own: columns are narrow); none for a
// lease file.
func heldOn(l *model.Lease) []string {
	if l.Backend == "" {
		return nil
	}
	host := l.Host
	if host == "" {
		host = "an unnamed host"
	}
	return []string{"  held on " + host}
}

// FrameOf is Frame for a remote claims backend's view: the lanes of its
// integration branch with its leases overlaid, ranked at this machine's
// clock; the warnings about symlinks are the checkout's.
func FrameOf(t *planfs.Tree, v *claims.View) (*model.Board, float64) {
	now := t.NowSeconds()
	b := model.NewBoard(v.Snapshot, model.Options{Now: now, History: t.History()})
	b.Leases = v.Snapshot.Leases
	b.Warnings = append(b.Warnings, look.BoardProblems(t.Project)...)
	b.Warnings = append(b.Warnings, look.CapWarnings(t.Project, b.Leases, now)...)
	return b, now
}

// ClaimsLine is a remote board's first line: where the claims are, how
// old the view is, and why the last read failed when it did.
func ClaimsLine(where string, v *claims.View, now float64, err error) string {
	s := "claims: " + where
	if v != nil {
		age := max(0, int64(now-float64(v.ReadAt.UnixNano())/1e9))
		s += fmt.Sprintf(" · read %d s ago", age)
	}
	if err != nil {
		s += " · cannot read: " + err.Error()
	}
	return termtext.Line(s)
}

// Remote is ClaimsDoc for a view read from backend at where; err is the
// last read's failure.
func Remote(backend, where string, v *claims.View, err error) *ClaimsDoc {
	d := &ClaimsDoc{Backend: backend, Where: where}
	if v != nil {
		d.ReadAt, d.Tip = float64(v.ReadAt.UnixNano())/1e9, v.Tip
	}
	if err != nil {
		d.Error = err.Error()
	}
	return d
}

// ReadRemote is one read of a remote claims backend's view, bounded.
func ReadRemote(b claims.Backend) (*claims.View, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := b.View(ctx)
	if err == nil && (v == nil || v.Snapshot == nil) {
		err = fmt.Errorf("claims backend %s returned no view", b.Name())
	}
	return v, err
}

// TextRemote is Text for a board whose claims are in b, at where: the
// claims line, then the kanban of b's view.
func TextRemote(t *planfs.Tree, b claims.Backend, where string, width int) (string, error) {
	v, err := ReadRemote(b)
	if err != nil {
		return "", err
	}
	board, now := FrameOf(t, v)
	events, _ := t.RecentEvents(5000)
	return ClaimsLine(where, v, now, nil) + "\n" + Render(board, Columns(false, false), events, now, width, false), nil
}

// WriteJSONRemote is WriteJSON for a board whose claims are in b.
func WriteJSONRemote(w io.Writer, t *planfs.Tree, b claims.Backend, where string) error {
	v, err := ReadRemote(b)
	if err != nil {
		return err
	}
	board, now := FrameOf(t, v)
	doc := JSON(t, board, now)
	doc.Claims = Remote(b.Name(), where, v, nil)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
