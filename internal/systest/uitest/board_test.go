package uitest

// `fleetwatch board`: anchor plan_board's kanban (TESTS 124–143) and the
// JSON board, whose per-tier ranks must be what workers pick.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// boardPutLease writes rel's lease as anchor does: agent claimed it ago
// seconds ago for ttl seconds, from origin.
func boardPutLease(t *testing.T, dir, rel, agent string, ago, ttl float64, origin string) {
	t.Helper()
	now := float64(time.Now().UnixNano()) / 1e9
	b, err := json.MarshalIndent(map[string]any{"plan": rel, "agent_id": agent, "claimed_at": now - ago,
		"expires_at": now - ago + ttl, "origin": origin}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ".plans", ".leases", strings.ReplaceAll(rel, "/", "__")+".json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// boardCol is one column of a `board --once` frame as read back from the text.
type boardCol struct {
	title string
	count int
	cards [][]string // each card's lines: slug, title, [P?/value], optional ↳ …
}

var boardHead = regexp.MustCompile(`^── (.+) \((\d+)\) ──$`)

// parseBoard reads a frame printed without colour back into columns: the
// column starts are where the `── Name (n) ──` headers start.
func parseBoard(t *testing.T, out string) []boardCol {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 3 || !regexp.MustCompile(`^Completed \(7d\): \d+   Processed \(7d\): \d+$`).MatchString(lines[0]) || lines[1] != "" {
		t.Fatalf("frame does not start with the 7-day counts and a blank line:\n%s", out)
	}
	head := []rune(lines[2])
	var starts []int
	for i := 0; i+3 < len(head); i++ {
		if head[i] == '─' && head[i+1] == '─' && head[i+2] == ' ' && unicode.IsLetter(head[i+3]) && (i == 0 || head[i-1] == ' ') {
			starts = append(starts, i)
		}
	}
	cell := func(line []rune, j int) string {
		from, to := starts[j], len(line)
		if j+1 < len(starts) {
			to = min(to, starts[j+1])
		}
		if from >= len(line) {
			return ""
		}
		return strings.TrimSpace(string(line[from:to]))
	}
	cols := make([]boardCol, len(starts))
	for j := range starts {
		m := boardHead.FindStringSubmatch(cell(head, j))
		if m == nil {
			t.Fatalf("column %d header %q is not `── Name (n) ──`:\n%s", j, cell(head, j), out)
		}
		cols[j].title = m[1]
		cols[j].count, _ = strconv.Atoi(m[2])
		var card []string
		for _, l := range lines[3:] {
			c := cell([]rune(l), j)
			if c == "" {
				if card != nil {
					cols[j].cards = append(cols[j].cards, card)
				}
				card = nil
				continue
			}
			card = append(card, c)
		}
		if card != nil {
			cols[j].cards = append(cols[j].cards, card)
		}
	}
	return cols
}

func (c boardCol) slugs() []string {
	var out []string
	for _, card := range c.cards {
		out = append(out, card[0])
	}
	return out
}

func boardTitles(cols []boardCol) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.title)
	}
	return out
}

// boardOnce runs `board --once` (piped, so without colour) and parses it.
func boardOnce(t *testing.T, dir string, args ...string) (string, []boardCol) {
	t.Helper()
	r := fwtest.Run(t, dir, append([]string{"board", "--project", dir, "--once", "--width", "200"}, args...)...)
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("board --once: %v", r)
	}
	return r.Stdout, parseBoard(t, r.Stdout)
}

// boardOneLine fails unless r is exit 2 with one `fleetwatch: ` line naming name.
func boardOneLine(t *testing.T, r fwtest.Result, name string) {
	t.Helper()
	if r.Code != 2 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "fleetwatch: ") ||
		strings.Count(r.Stderr, "\n") != 1 || !strings.HasSuffix(r.Stderr, "\n") || !strings.Contains(r.Stderr, name) {
		t.Errorf("want exit 2 and one `fleetwatch: ` line naming %q, got %v", name, r)
	}
}

// boardAnchor is a plan as anchor's plan_board test helper writes it.
func boardAnchor(rel string, fields ...string) fwtest.Plan {
	return fwtest.Plan{Rel: rel, Fields: strings.Join(append([]string{"Value: medium", "Preferred models: mid"}, fields...), ";")}
}

// TESTS 124, 125: one plan in each lane → exactly five columns, each with its plans.
func TestBoardColumnsAndCards(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, boardAnchor("drafts/d.md"), boardAnchor("bugs/b.md"), boardAnchor("features/f.md"),
		boardAnchor("in-progress/ip.md"), boardAnchor("review-needed/rn.md"), boardAnchor("completed/c.md"))
	out, cols := boardOnce(t, dir)
	if got := boardTitles(cols); !slices.Equal(got, []string{"Drafts", "Ready", "In Progress", "Review Needed", "Completed"}) {
		t.Fatalf("columns %q:\n%s", got, out)
	}
	want := [][]string{{"d"}, {"b", "f"}, {"ip"}, {"rn"}, {"c"}}
	for j, c := range cols {
		if !slices.Equal(c.slugs(), want[j]) || c.count != len(want[j]) {
			t.Errorf("%s: count %d, cards %q; want %q", c.title, c.count, c.slugs(), want[j])
		}
		for _, card := range c.cards {
			// Card lines: slug, H1 title, [P?/value].
			if len(card) != 3 || card[1] != "Plan: "+card[0] || card[2] != "[P2/medium]" {
				t.Errorf("%s: card %q, want slug, title, [P2/medium]", c.title, card)
			}
		}
	}
}

// Cards say who holds a plan or why it waits (one ↳ line), and the frame
// header counts what reached completed/ and review-needed/ this week.
func TestBoardCardNotesAndWeekCounts(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		boardAnchor("features/mine.md", "Assignee: alice"),
		boardAnchor("features/waits.md", "Depends on: nope"),
		boardAnchor("in-progress/live.md"), boardAnchor("in-progress/old.md"),
		boardAnchor("features/done.md"), boardAnchor("features/reviewed.md"),
	)
	boardPutLease(t, dir, "in-progress/live.md", "mid-1", 600, 3600, "features/live.md")
	boardPutLease(t, dir, "in-progress/old.md", "small-2", 7200, 3600, "features/old.md")
	for slug, to := range map[string]string{"done": "completed", "reviewed": "review-needed"} {
		if r := fwtest.Run(t, dir, "work-once", "--root", dir, "--slug", slug, "--agent-id", "w"); r.Code != 0 {
			t.Fatalf("claim %s: %v", slug, r)
		}
		if r := fwtest.Run(t, dir, "complete", "--root", dir, slug, "--to", to, "--agent-id", "w"); r.Code != 0 {
			t.Fatalf("complete %s: %v", slug, r)
		}
	}
	out, cols := boardOnce(t, dir)
	if !strings.HasPrefix(out, "Completed (7d): 1   Processed (7d): 2\n") {
		t.Errorf("week counts after one completed and one sent for review:\n%s", out)
	}
	notes := map[string]string{}
	for _, c := range cols {
		for _, card := range c.cards {
			if n := card[len(card)-1]; strings.HasPrefix(n, "↳ ") {
				notes[card[0]] = n
			}
		}
	}
	for slug, want := range map[string]string{
		"mine": `^↳ for alice$`, "waits": `^↳ UNMET nope`, "live": `^↳ mid-1, (49|50)m left$`, "old": `^↳ lease EXPIRED \(small-2\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(notes[slug]) {
			t.Errorf("%s: note %q, want %s\n%s", slug, notes[slug], want, out)
		}
	}
	for _, slug := range []string{"done", "reviewed"} {
		if n, ok := notes[slug]; ok {
			t.Errorf("%s: unexpected note %q", slug, n)
		}
	}
}

// TEST 126: parked lanes only with --include-parked, as the last two columns.
func TestBoardIncludeParked(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, boardAnchor("ambiguous/a.md"), boardAnchor("blocked/bl.md"), boardAnchor("features/f.md"))
	out, cols := boardOnce(t, dir)
	if len(cols) != 5 || strings.Contains(out, "Ambiguous") || strings.Contains(out, "Blocked") ||
		regexp.MustCompile(`(?m)^\s*(a|bl)\s*$`).MatchString(out) {
		t.Errorf("without --include-parked want 5 columns and no parked plans:\n%s", out)
	}
	out, cols = boardOnce(t, dir, "--include-parked")
	if got := boardTitles(cols); !slices.Equal(got, []string{"Drafts", "Ready", "In Progress", "Review Needed", "Completed", "Ambiguous", "Blocked"}) {
		t.Fatalf("--include-parked columns %q:\n%s", got, out)
	}
	if !slices.Equal(cols[5].slugs(), []string{"a"}) || !slices.Equal(cols[6].slugs(), []string{"bl"}) || !slices.Equal(cols[1].slugs(), []string{"f"}) {
		t.Errorf("--include-parked cards: %q %q %q:\n%s", cols[1].slugs(), cols[5].slugs(), cols[6].slugs(), out)
	}
}

// TEST 127: Ready is bugs first, then Priority, then Value.
func TestBoardReadyOrder(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "features/high.md", Fields: "Priority: P1; Value: high; Preferred models: mid"},
		fwtest.Plan{Rel: "bugs/low.md", Fields: "Priority: P3; Value: low; Preferred models: mid"},
		fwtest.Plan{Rel: "features/low.md", Fields: "Priority: P2; Value: low; Preferred models: mid"},
		fwtest.Plan{Rel: "features/hi2.md", Fields: "Priority: P2; Value: high; Preferred models: mid"},
	)
	out, cols := boardOnce(t, dir)
	ready := cols[1]
	if !slices.Equal(ready.slugs(), []string{"low", "high", "hi2", "low"}) || ready.count != 4 {
		t.Fatalf("Ready order %q (count %d), want low(bug) high hi2 low(feature):\n%s", ready.slugs(), ready.count, out)
	}
	if ready.cards[0][2] != "[P3/low]" || ready.cards[3][2] != "[P2/low]" {
		t.Errorf("the bug must lead and the feature trail: %q, %q", ready.cards[0], ready.cards[3])
	}
}

// TESTS 130, 142: a plan with nothing to say has no ↳ line; piped output has
// no colour even without --no-color.
func TestBoardPlainWhenPiped(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, boardAnchor("features/smoke.md"), boardAnchor("features/nolabel.md"))
	for _, args := range [][]string{{"--no-color"}, nil} {
		r := fwtest.Run(t, dir, append([]string{"board", "--project", dir, "--once"}, args...)...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "smoke") || !strings.Contains(r.Stdout, "nolabel") {
			t.Fatalf("board --once %v: %v", args, r)
		}
		if strings.Contains(r.Stdout, "\x1b[") {
			t.Errorf("board --once %v piped has escape sequences: %q", args, r.Stdout)
		}
		if strings.Contains(r.Stdout, "↳") {
			t.Errorf("board --once %v: no lease, person or deps, yet a ↳ line:\n%s", args, r.Stdout)
		}
	}
	// NO_COLOR, FORCE_COLOR and a colour TERM change nothing when piped.
	r := fwtest.RunEnv(t, dir, []string{"TERM=xterm-256color", "COLORTERM=truecolor", "CLICOLOR_FORCE=1"}, "board", "--project", dir, "--once")
	if r.Code != 0 || strings.Contains(r.Stdout, "\x1b[") {
		t.Errorf("board --once piped with a colour TERM: %q", r.Stdout)
	}
}

// TEST 143: no .plans/ → one line, and exit 2 like every other command
// (anchor's plan_board exits 1, which reads as "nothing to do").
func TestBoardNoTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"--once"}, {"--json"}, {"--once", "--include-parked"}} {
		r := fwtest.Run(t, dir, append([]string{"board", "--project", dir}, args...)...)
		if r.Code != fwtest.ExitError || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "fleetwatch: ") || strings.Count(r.Stderr, "\n") != 1 ||
			!strings.Contains(r.Stderr, ".plans") {
			t.Errorf("board %v without .plans/: want exit 2 and one line naming .plans, got %v", args, r)
		}
	}
}

// boardWidthTree has long slugs and titles, a lease and unmet deps, so
// every kind of card line is there to overflow.
func boardWidthTree(t *testing.T) string {
	dir := fwtest.NewTree(t,
		boardAnchor("drafts/a-rather-long-draft-slug-for-the-board.md"),
		boardAnchor("bugs/the-login-page-times-out-on-slow-networks.md", "Depends on: missing-plan-with-a-long-name"),
		boardAnchor("features/full-text-search-over-every-note-and-tag.md", "Assignee: somebody-with-a-long-name@example.com"),
		boardAnchor("in-progress/in-flight-with-a-long-lease-owner.md"),
		boardAnchor("review-needed/waiting-for-a-person-to-review.md"),
		boardAnchor("completed/finished-long-ago-and-shipped.md"),
		boardAnchor("ambiguous/unclear-what-done-means-here.md"),
		boardAnchor("blocked/waiting-on-the-payment-vendor.md"),
	)
	boardPutLease(t, dir, "in-progress/in-flight-with-a-long-lease-owner.md", "reasoner-worker-on-the-big-box", 60, 3600, "features/in-flight-with-a-long-lease-owner.md")
	return dir
}

// boardLinesFit fails for every line of a --once frame wider than width cells.
func boardLinesFit(t *testing.T, dir string, width int, args ...string) {
	t.Helper()
	args = append([]string{"board", "--project", dir, "--once", "--width", strconv.Itoa(width)}, args...)
	r := fwtest.Run(t, dir, args...)
	if r.Code != 0 {
		t.Fatalf("%v: %v", args, r)
	}
	for i, line := range strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n") {
		if w := ansi.StringWidth(line); w > width {
			t.Errorf("%v: line %d is %d cells wide:\n%s", args[4:], i+1, w, line)
		}
	}
}

// Columns share the width they are given: every line fits.
func TestBoardFitsWidth(t *testing.T) {
	t.Parallel()
	dir := boardWidthTree(t)
	for _, w := range []int{80, 100, 160} {
		boardLinesFit(t, dir, w)
	}
	boardLinesFit(t, dir, 160, "--include-parked")
	// Piped, the width defaults to 100.
	r := fwtest.Run(t, dir, "board", "--project", dir, "--once")
	for _, line := range strings.Split(r.Stdout, "\n") {
		if ansi.StringWidth(line) > 100 {
			t.Errorf("default width: %d cells: %s", ansi.StringWidth(line), line)
		}
	}
}

// A narrow terminal: every line still fits in --width 60.
func TestBoardNarrowWidth(t *testing.T) {
	t.Parallel()
	dir := boardWidthTree(t)
	boardLinesFit(t, dir, 60)
	boardLinesFit(t, dir, 60, "--include-parked")
	boardLinesFit(t, dir, 100, "--include-parked")
}

// Bad flags: exit 2 and one line naming the flag.
func TestBoardBadFlags(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, boardAnchor("features/f.md"))
	boardOneLine(t, fwtest.Run(t, dir, "board", "--once", "--width", "-3"), "width")
	boardOneLine(t, fwtest.Run(t, dir, "board", "--once", "--width", "wide"), "width")
	boardOneLine(t, fwtest.Run(t, dir, "board", "--once", "--bogus"), "bogus")
	boardOneLine(t, fwtest.Run(t, dir, "board", "--json", "--interval=fast"), "interval")
}

// A stray argument is not silently taken for something else.
func TestBoardStrayArgument(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, boardAnchor("features/f.md"))
	boardOneLine(t, fwtest.Run(t, dir, "board", "--once", "--project", dir, "stray"), "stray")
}

// boardDoc is `board --json` as a script reads it.
type boardDoc struct {
	Project string  `json:"project"`
	Now     float64 `json:"now"`
	Lanes   []struct {
		Lane  string         `json:"lane"`
		Count int            `json:"count"`
		Plans []boardDocPlan `json:"plans"`
	} `json:"lanes"`
	Leases   []boardDocLease  `json:"leases"`
	Warnings []map[string]any `json:"warnings"`
}

type boardDocPlan struct {
	Path      string   `json:"path"`
	Slug      string   `json:"slug"`
	Title     string   `json:"title"`
	Priority  string   `json:"priority"`
	Value     string   `json:"value"`
	Preferred []string `json:"preferred"`
	Person    string   `json:"person"`
	Deps      struct {
		Met   bool `json:"met"`
		Unmet []struct {
			Slug   string `json:"slug"`
			Reason string `json:"reason"`
		} `json:"unmet"`
	} `json:"deps"`
	Lease *boardDocLease `json:"lease"`
	Tiers map[string]struct {
		Fit  string `json:"fit"`
		Rank int    `json:"rank"`
	} `json:"tiers"`
}

type boardDocLease struct {
	Plan      string  `json:"plan"`
	AgentID   string  `json:"agent_id"`
	ClaimedAt float64 `json:"claimed_at"`
	ExpiresAt float64 `json:"expires_at"`
	Active    bool    `json:"active"`
}

var boardTiers = []string{"small", "mid", "reasoner", "frontier"}

// board --json: every lane in order, leases live and expired, people, unmet
// dependencies, and per-tier ranks that are what a bare worker of that tier
// sees in `work-once --list --json`.
func TestBoardJSON(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "drafts/d.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "bugs/b-small.md", Fields: "Preferred models: small"},
		fwtest.Plan{Rel: "bugs/b-mid-p3.md", Fields: "Priority: P3; Value: low; Preferred models: mid"},
		fwtest.Plan{Rel: "features/f-mid.md", Fields: "Priority: P1; Value: high; Preferred models: mid"},
		fwtest.Plan{Rel: "features/f-reasoner.md", Fields: "Preferred models: reasoner"},
		fwtest.Plan{Rel: "features/f-frontier.md", Fields: "Priority: P1; Preferred models: frontier"},
		fwtest.Plan{Rel: "features/f-range.md", Fields: "Value: high; Preferred models: small, reasoner"},
		fwtest.Plan{Rel: "features/f-any.md", Fields: "Priority: P3"},
		fwtest.Plan{Rel: "features/f-qwen.md", Fields: "Priority: P1; Preferred models: Qwen3 32B"},
		fwtest.Plan{Rel: "features/f-person.md", Fields: "Priority: P1; Preferred models: mid, reasoner; Assignee: alice"},
		fwtest.Plan{Rel: "features/f-dep.md", Fields: "Priority: P1; Preferred models: mid; Depends on: nope, d"},
		fwtest.Plan{Rel: "features/f-dep-met.md", Fields: "Preferred models: reasoner; Depends on: c"},
		fwtest.Plan{Rel: "features/f-leased.md", Fields: "Priority: P1; Value: high; Preferred models: mid, small, reasoner, frontier"},
		fwtest.Plan{Rel: "in-progress/ip-live.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "in-progress/ip-old.md", Fields: "Preferred models: small"},
		fwtest.Plan{Rel: "review-needed/rn.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "ambiguous/a.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "blocked/bl.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "completed/c.md", Fields: "Preferred models: mid"},
	)
	boardPutLease(t, dir, "in-progress/ip-live.md", "mid-1", 600, 3600, "features/ip-live.md")
	boardPutLease(t, dir, "in-progress/ip-old.md", "small-2", 7200, 3600, "bugs/ip-old.md")
	// anchor's claim in flight: the ready-path lease keeps others off f-leased.
	boardPutLease(t, dir, "features/f-leased.md", "anchor-w", 1, 3600, "")

	r := fwtest.Run(t, dir, "board", "--project", dir, "--json")
	if r.Code != 0 || r.Stderr != "" || strings.Contains(r.Stdout, "\x1b[") {
		t.Fatalf("board --json: %v", r)
	}
	var doc boardDoc
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("board --json is not one JSON object: %v\n%s", err, r.Stdout)
	}
	if dec.More() {
		t.Fatalf("board --json printed more than one object:\n%s", r.Stdout)
	}
	if real, _ := filepath.EvalSymlinks(dir); doc.Project != dir && doc.Project != real {
		t.Errorf("project %q, want %q", doc.Project, dir)
	}
	if now := float64(time.Now().Unix()); doc.Now < now-60 || doc.Now > now+60 {
		t.Errorf("now %f is not the current time", doc.Now)
	}

	// Every lane, in the tree's order, with the files on disk.
	var lanes []string
	byRel := map[string]*boardDocPlan{}
	for li := range doc.Lanes {
		l := &doc.Lanes[li]
		lanes = append(lanes, l.Lane)
		files, _ := filepath.Glob(filepath.Join(dir, ".plans", l.Lane, "*.md"))
		var onDisk []string
		for _, f := range files {
			if filepath.Base(f) != "README.md" {
				onDisk = append(onDisk, l.Lane+"/"+filepath.Base(f))
			}
		}
		var listed []string
		for i := range l.Plans {
			p := &l.Plans[i]
			listed = append(listed, p.Path)
			byRel[p.Path] = p
			if len(p.Tiers) != 4 {
				t.Errorf("%s: tiers %v, want one per tier", p.Path, p.Tiers)
			}
			if p.Preferred == nil {
				t.Errorf("%s: preferred is null, want a list", p.Path)
			}
		}
		slices.Sort(listed)
		if l.Count != len(l.Plans) || !slices.Equal(listed, onDisk) {
			t.Errorf("lane %s: count %d, plans %q; on disk %q", l.Lane, l.Count, listed, onDisk)
		}
	}
	if want := []string{"drafts", "bugs", "features", "in-progress", "review-needed", "ambiguous", "blocked", "completed"}; !slices.Equal(lanes, want) {
		t.Fatalf("lanes %q, want %q", lanes, want)
	}
	get := func(rel string) *boardDocPlan {
		t.Helper()
		p, ok := byRel[rel]
		if !ok {
			t.Fatalf("%s is not on the board", rel)
		}
		return p
	}

	// Leases: live, expired, and anchor's ready-path one.
	leases := map[string]boardDocLease{}
	for _, l := range doc.Leases {
		leases[l.Plan] = l
	}
	for rel, want := range map[string]struct {
		agent  string
		active bool
	}{"in-progress/ip-live.md": {"mid-1", true}, "in-progress/ip-old.md": {"small-2", false}, "features/f-leased.md": {"anchor-w", true}} {
		l, ok := leases[rel]
		if !ok || l.AgentID != want.agent || l.Active != want.active || l.ExpiresAt-l.ClaimedAt < 3599 {
			t.Errorf("lease of %s: %+v (listed %v), want %s active=%v", rel, l, ok, want.agent, want.active)
		}
		if p := get(rel); p.Lease == nil || p.Lease.AgentID != want.agent || p.Lease.Active != want.active {
			t.Errorf("%s: plan lease %+v, want %s active=%v", rel, p.Lease, want.agent, want.active)
		}
	}
	if len(doc.Leases) != 3 {
		t.Errorf("leases %+v, want 3", doc.Leases)
	}
	if p := get("features/f-mid.md"); p.Lease != nil {
		t.Errorf("f-mid has a lease: %+v", p.Lease)
	}

	// A person's plan, and deps.
	if p := get("features/f-person.md"); p.Person != "alice" {
		t.Errorf("f-person: person %q, want alice", p.Person)
	}
	if p := get("features/f-mid.md"); p.Person != "" {
		t.Errorf("f-mid: person %q, want none", p.Person)
	}
	dep := get("features/f-dep.md")
	unmet := map[string]string{}
	for _, u := range dep.Deps.Unmet {
		unmet[u.Slug] = u.Reason
	}
	if dep.Deps.Met || unmet["nope"] != "missing" || unmet["d"] != "open:drafts" || len(unmet) != 2 {
		t.Errorf("f-dep deps %+v, want unmet nope (missing) and d (open:drafts)", dep.Deps)
	}
	if p := get("features/f-dep-met.md"); !p.Deps.Met || len(p.Deps.Unmet) != 0 {
		t.Errorf("f-dep-met deps %+v, want met", p.Deps)
	}
	if p := get("features/f-mid.md"); p.Priority != "P1" || p.Value != "high" || p.Title != "Plan: f-mid" || p.Slug != "f-mid" ||
		!slices.Equal(p.Preferred, []string{"mid"}) {
		t.Errorf("f-mid header: %+v", p)
	}

	// Per tier: the board's ranks are a bare worker's pick order.
	for _, tier := range boardTiers {
		var board []string
		ranks := map[string]int{}
		for _, l := range doc.Lanes {
			for _, p := range l.Plans {
				if rk := p.Tiers[tier].Rank; rk > 0 {
					board = append(board, p.Path)
					ranks[p.Path] = rk
				}
			}
		}
		slices.SortFunc(board, func(a, b string) int { return ranks[a] - ranks[b] })
		for i, rel := range board {
			if ranks[rel] != i+1 {
				t.Errorf("%s: ranks are not 1..n: %v", tier, ranks)
				break
			}
		}

		lr := fwtest.Run(t, dir, "work-once", "--list", "--json", "--root", dir, "--tier", tier)
		var list struct {
			Plans []struct {
				Rel  string `json:"rel"`
				Rank *int   `json:"rank"`
			} `json:"plans"`
		}
		if lr.Code != 0 {
			t.Fatalf("work-once --list --json --tier %s: %v", tier, lr)
		}
		if err := json.Unmarshal([]byte(lr.Stdout), &list); err != nil {
			t.Fatalf("work-once --list --json --tier %s: %v\n%s", tier, err, lr.Stdout)
		}
		var worker []string
		wranks := map[string]int{}
		for _, p := range list.Plans {
			if p.Rank != nil {
				worker = append(worker, p.Rel)
				wranks[p.Rel] = *p.Rank
			}
		}
		slices.SortFunc(worker, func(a, b string) int { return wranks[a] - wranks[b] })
		if len(board) == 0 || len(worker) == 0 || board[0] != worker[0] {
			t.Errorf("%s: the board's first pick %q is not the worker's %q", tier, board, worker)
		} else if !slices.Equal(board, worker) {
			t.Errorf("%s: board order %q, worker order %q", tier, board, worker)
		}
		t.Logf("%s picks %q", tier, board)
	}
	// What the tree was built to show: each tier starts somewhere else, and
	// no one is offered a person's, a leased or a blocked plan.
	firsts := map[string]bool{}
	for _, tier := range boardTiers {
		for _, l := range doc.Lanes {
			for _, p := range l.Plans {
				if p.Tiers[tier].Rank == 1 {
					firsts[p.Path] = true
				}
				if p.Tiers[tier].Rank > 0 && (p.Person != "" || p.Lease != nil || !p.Deps.Met || (l.Lane != "bugs" && l.Lane != "features")) {
					t.Errorf("%s ranks %s (%d), which no bare pick may take", tier, p.Path, p.Tiers[tier].Rank)
				}
			}
		}
	}
	if len(firsts) < 3 {
		t.Errorf("the tiers' first picks %v should differ", firsts)
	}
}

// Without a terminal, demo builds nothing; with --keep it builds the
// project, says where, and how to open it.
func TestDemoWithoutTerminal(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	env := []string{"TMPDIR=" + tmp}
	r := fwtest.RunEnv(t, tmp, env, "demo")
	if r.Code != fwtest.ExitError || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "--keep") {
		t.Fatalf("demo without a terminal: %v", r)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "fleetwatch-demo-*")); len(left) != 0 {
		t.Fatalf("demo without a terminal built %v", left)
	}
	r = fwtest.RunEnv(t, tmp, env, "demo", "--keep")
	m := regexp.MustCompile(`demo project: (\S+) \(kept\)`).FindStringSubmatch(r.Stdout)
	if r.Code != fwtest.ExitOK || m == nil || !strings.Contains(r.Stdout, "fleetwatch --root "+m[1]) {
		t.Fatalf("demo --keep without a terminal: %v", r)
	}
	if b := fwtest.Run(t, tmp, "board", "--json", "--root", m[1]); b.Code != fwtest.ExitOK || !strings.Contains(b.Stdout, `"lane": "in-progress"`) {
		t.Fatalf("the kept demo project does not read as a board: %v", b)
	}
}

// A title or assignee carrying escape sequences reaches the kanban as `?`.
func TestBoardCardsDropControlCharacters(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, boardAnchor("features/evil\x1b[2J.md", "Assignee: \x1b]0;owned\x07mallory"))
	r := fwtest.Run(t, dir, "board", "--once", "--root", dir)
	if r.Code != fwtest.ExitOK || strings.ContainsAny(r.Stdout, "\x1b\x07") || !strings.Contains(r.Stdout, "evil?[2J") {
		t.Fatalf("board --once with escape sequences in a plan: %q", r.Stdout)
	}
}
