package ui

// Several projects in one cockpit: the Projects overview, one row per
// project (its lanes, live workers, unread notices, today's spend, the
// merge queue's head), over each project's own cockpit. Every project has
// its hub (its watchers and readings) and its Model subscribed to it, kept
// warm: enter and the switching keys show a project at once, and a
// project not shown still notices what needs a person, which the shown
// one's header names. A command a project's model returns is tagged with
// the project (projectMsg), so what it brings reaches that model and no
// other. The overview's rows come from the models' readings, never from
// the disk.

import (
	"io"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/feed"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/panes/plans"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	wlook "github.com/fleetwatch/fleetwatch/workers/look"
)

// Project is one project of a cockpit over several.
type Project struct {
	Name string
	// Root is the project's folder as configured, named on its problem row.
	Root string
	// Options open the project's cockpit; its hub is Options.Hub, shared
	// and its owner's to close (serve's), else one made from Tree and
	// Claims. Tree is nil when the project could not be opened.
	Options uictx.Options
	// Problem is why it could not be opened (a missing root): its row says
	// so, and enter does not open it.
	Problem string
}

// projectKeys are the keys between projects: 0 as the pane keys 1–8, and
// the angle brackets, which no pane uses.
func projectKeys() uictx.ProjectKeys {
	b := func(help, k string) key.Binding { return key.NewBinding(key.WithKeys(k), key.WithHelp(k, help)) }
	return uictx.ProjectKeys{Overview: b("projects overview", "0"), Next: b("next project", ">"), Prev: b("previous project", "<"), Open: b("open project", "enter")}
}

// between are the keys a project's help lists.
func between(k *uictx.ProjectKeys) []*key.Binding {
	return []*key.Binding{&k.Overview, &k.Next, &k.Prev}
}

// Projects is the program of a cockpit over several projects.
type Projects struct {
	*uictx.Common // the overview's context: renderer, styles, keys, size
	list          []projectEntry
	cursor        int
	offset        int
	shown         int // the project whose panes are on screen; -1 the overview
	last          int // the project shown last: an untagged message is its
	helping       bool
	status        string
}

// projectEntry is one project: its model when it opened, the hub made
// for it (nil for one given), and its row as last summarised.
type projectEntry struct {
	name, root, problem string
	hub                 *Hub
	m                   *Model
	sum                 projectSum
}

// projectSum is what the overview shows of a project, from its model.
type projectSum struct {
	loaded            bool
	counts            []int // per model.Lanes
	live, stale, dead int
	unread            int
	usd               float64
	spent             bool
	queue             string // the queue's head and its state; "" when empty
	problem           string
}

// projectMsg is a message one project's command brought, for that
// project's model.
type projectMsg struct {
	i   int
	msg tea.Msg
}

// NewProjects opens the cockpit over ps: a hub and a model for each
// project that opened. The first project's options give the look (the
// renderer); Close ends it all.
func NewProjects(ps []Project) Projects {
	look := uictx.Options{}
	if len(ps) > 0 {
		look = ps[0].Options
	}
	if look.Renderer == nil {
		look.Renderer = lipgloss.DefaultRenderer()
	}
	p := Projects{Common: newCommon(look), shown: -1}
	p.Keys.Projects = projectKeys()
	for _, pr := range ps {
		e := projectEntry{name: termtext.Line(pr.Name), root: termtext.Line(pr.Root), problem: termtext.Line(pr.Problem)}
		if pr.Options.Tree != nil && e.problem == "" {
			opt := pr.Options
			if opt.Hub == nil {
				e.hub, _ = NewHubClaims(opt.Tree, opt.Claims)
				if e.hub != nil {
					// Never a nil *Hub in the interface: that is a hub.
					opt.Hub = e.hub
				}
			}
			opt.Source = nil
			m := New(opt)
			m.several, m.Keys.Projects = true, projectKeys()
			e.m = &m
		} else if e.problem == "" {
			e.problem = "not opened"
		}
		p.list = append(p.list, e)
	}
	for i := range p.list {
		p.list[i].summarize()
	}
	return p
}

// RunProjects opens the cockpit over ps full screen and returns when the
// operator quits.
func RunProjects(ps []Project) error {
	var out io.Writer = os.Stdout
	for i := range ps {
		if ps[i].Options.Out == nil {
			ps[i].Options.Out = os.Stdout // each project's bell
		}
		out = ps[i].Options.Out
	}
	p := NewProjects(ps)
	defer p.Close()
	_, err := tea.NewProgram(p, tea.WithAltScreen(), tea.WithOutput(out), tea.WithFPS(frameRate)).Run()
	return err
}

// Close stops every project's model and hub.
func (p *Projects) Close() {
	for i := range p.list {
		if e := &p.list[i]; e.m != nil {
			e.m.Close()
		}
		if e := &p.list[i]; e.hub != nil {
			_ = e.hub.Close()
		}
	}
}

// queueEvery is how often the overview asks for the merge queues again: a
// queue moves with nothing the hubs watch saying so (queue add from a
// shell, a check ending), and a hidden project's hub reads its queue only
// on a change while no session shows it.
const queueEvery = 10 * time.Second

// queueTickMsg is the overview's clock for the queues.
type queueTickMsg struct{}

func queueTickCmd() tea.Cmd {
	return tea.Tick(queueEvery, func(time.Time) tea.Msg { return queueTickMsg{} })
}

// readQueues asks every project's hub for its queue, while the overview
// shows them.
func (p *Projects) readQueues() {
	if p.shown >= 0 {
		return
	}
	for i := range p.list {
		if m := p.list[i].m; m != nil && hubOf(m.Opt) != nil {
			// Read unless read in the last half of queueEvery: a tick coming
			// a little before the last reading's age is a whole period still
			// reads.
			hubOf(m.Opt).PokeOlder(feed.Merge, queueEvery/2)
		}
	}
}

// Init starts every project's model and the queues' clock.
func (p Projects) Init() tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(p.list)+1)
	cmds = append(cmds, queueTickCmd())
	for i := range p.list {
		if e := &p.list[i]; e.m != nil {
			cmds = append(cmds, tagCmd(i, e.m.Init()))
		}
	}
	return tea.Batch(cmds...)
}

// Update routes a message: a tagged one to its project, the window's size
// to all, keys to the overview or the shown project (the switching keys
// first, unless a field or an overlay takes the keys there).
func (p Projects) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case projectMsg:
		cmd = p.brought(msg.i, msg.msg)
	case StopMsg:
		// The server stops: the project shown says why and quits; the
		// overview just quits (the session says why after).
		if p.shown >= 0 {
			cmd = p.deliver(p.shown, msg)
		} else {
			p.status, cmd = "✗ "+termtext.Line(msg.Reason), tea.Quit
		}
	case queueTickMsg:
		p.readQueues()
		cmd = queueTickCmd()
	case tea.WindowSizeMsg:
		p.Width, p.Height, p.Cols = msg.Width, msg.Height, max(1, msg.Width-1)
		cmds := make([]tea.Cmd, 0, len(p.list))
		for i := range p.list {
			if p.list[i].m != nil {
				cmds = append(cmds, p.deliver(i, msg))
			}
		}
		cmd = tea.Batch(cmds...)
	case tea.KeyMsg:
		if p.shown < 0 {
			cmd = p.overviewKey(msg)
		} else if c, ok := p.switchKey(msg); ok {
			cmd = c
		} else {
			cmd = p.deliver(p.shown, msg)
		}
	default:
		// What a project's command brought back untagged (its editor's
		// end): the project shown last asked for it. Bubble Tea's own
		// messages come here too, after the runtime did what they ask.
		if reflect.TypeOf(msg).PkgPath() != teaPkg && p.last < len(p.list) && p.list[p.last].m != nil {
			cmd = p.deliver(p.last, msg)
		}
	}
	p.tellAway()
	return p, cmd
}

// teaPkg is Bubble Tea's own package: its messages (quit, an external
// program, a sequence) are for the runtime, not for a model.
var (
	teaPkg  = reflect.TypeFor[tea.QuitMsg]().PkgPath()
	cmdType = reflect.TypeFor[tea.Cmd]()
)

// tagCmd makes cmd's message project i's.
func tagCmd(i int, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		msg := cmd()
		if msg == nil {
			return nil
		}
		return projectMsg{i: i, msg: msg}
	}
}

// brought is what a command of project i brought: a batch or a sequence
// is taken apart so each of its commands is tagged; Bubble Tea's own
// messages (quit, an external program) go back to the runtime as they
// are; the rest is the model's.
func (p *Projects) brought(i int, msg tea.Msg) tea.Cmd {
	if b, ok := msg.(tea.BatchMsg); ok {
		cmds := make([]tea.Cmd, len(b))
		for j, c := range b {
			cmds[j] = tagCmd(i, c)
		}
		return tea.Batch(cmds...)
	}
	if t := reflect.TypeOf(msg); t.PkgPath() == teaPkg {
		if t.Kind() == reflect.Slice && t.Elem() == cmdType {
			v := reflect.ValueOf(msg)
			cmds := make([]tea.Cmd, v.Len())
			for j := range cmds {
				cmds[j] = tagCmd(i, v.Index(j).Interface().(tea.Cmd))
			}
			return tea.Sequence(cmds...)
		}
		return func() tea.Msg { return msg }
	}
	return p.deliver(i, msg)
}

// deliver gives project i's model msg and tags what it asks for.
func (p *Projects) deliver(i int, msg tea.Msg) tea.Cmd {
	e := &p.list[i]
	next, cmd := e.m.Update(msg)
	*e.m = next.(Model)
	e.summarize()
	return tagCmd(i, cmd)
}

// switchKey answers the keys between projects inside one, unless a text
// field or an overlay (a question, the help) takes the keys there.
func (p *Projects) switchKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	m := p.list[p.shown].m
	if m.typing() || m.stack.top() != nil {
		return nil, false
	}
	k := &p.Keys.Projects
	switch {
	case key.Matches(msg, k.Overview):
		p.cursor, p.shown = p.shown, -1
		p.readQueues()
		return nil, true
	case key.Matches(msg, k.Next):
		return p.open(p.step(p.shown, 1)), true
	case key.Matches(msg, k.Prev):
		return p.open(p.step(p.shown, -1)), true
	}
	return nil, false
}

// overviewKey answers a key on the overview: moving, opening, help, quit.
func (p *Projects) overviewKey(msg tea.KeyMsg) tea.Cmd {
	k := &p.Keys
	p.status = ""
	if p.helping {
		p.helping = false // any key closes it; q also quits
		if key.Matches(msg, k.Quit) {
			return tea.Quit
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		p.helping = true
	case key.Matches(msg, k.Projects.Open):
		return p.open(p.cursor)
	case key.Matches(msg, k.Projects.Next):
		return p.open(p.step(p.cursor, 1))
	case key.Matches(msg, k.Projects.Prev):
		return p.open(p.step(p.cursor, -1))
	}
	if d, ok := k.Step(msg, p.rowsShown(), len(p.list)); ok {
		p.cursor = max(0, min(len(p.list)-1, p.cursor+d))
	}
	return nil
}

// step is the next project from i in direction d that opened, wrapping;
// i itself when no other did.
func (p *Projects) step(i, d int) int {
	n := len(p.list)
	for j := 1; j <= n; j++ {
		if k := ((i+d*j)%n + n) % n; p.list[k].m != nil {
			return k
		}
	}
	return i
}

// open shows project i's panes; one that did not open says why.
func (p *Projects) open(i int) tea.Cmd {
	if i < 0 || i >= len(p.list) {
		return nil
	}
	e := &p.list[i]
	if e.m == nil {
		p.cursor = i
		p.status = "✗ " + e.name + " is not open: " + e.problem
		return nil
	}
	p.shown, p.last, p.cursor = i, i, i
	return nil
}

// tellAway puts the other projects' unread notices in the shown one's
// header, naming each project.
func (p *Projects) tellAway() {
	if p.shown < 0 {
		return
	}
	var parts []string
	for i := range p.list {
		if e := &p.list[i]; i != p.shown && e.sum.unread > 0 {
			parts = append(parts, e.name+" "+kit.Itoa(e.sum.unread))
		}
	}
	away := ""
	if len(parts) > 0 {
		away = "⚑ " + strings.Join(parts, ", ")
		if !p.Plain {
			away = p.St.Warn.Render(away)
		}
		away = " · " + away
	}
	p.list[p.shown].m.away = away
}

// summarize reads the overview's facts off the project's model.
func (e *projectEntry) summarize() {
	m := e.m
	if m == nil {
		return
	}
	s := projectSum{counts: e.sum.counts[:0], problem: termtext.Line(m.problem)}
	if m.loadErr != nil {
		s.problem = termtext.Line(m.loadErr.Error())
	}
	if m.d != nil {
		s.loaded = true
		for _, l := range model.Lanes {
			s.counts = append(s.counts, plans.LaneCount(m.d, l))
		}
	}
	for i := range m.wrk.rows {
		switch m.wrk.rows[i].Health {
		case wlook.Live:
			s.live++
		case wlook.Stale:
			s.stale++
		case wlook.Dead:
			s.dead++
		}
	}
	s.unread = m.notes.unread()
	today := m.fleetData.Fleet.Today
	s.usd, s.spent = today.USD, today.Tokens != 0 || today.USD != 0
	if m.merge.err != nil {
		s.queue = "—" // the Merge pane says why
	}
	for _, it := range m.merge.listing.Items {
		if it.Position != nil && *it.Position == 1 {
			s.queue = termtext.Line(it.Slug) + " " + string(it.State)
		}
	}
	e.sum = s
}

// View draws the shown project, or the overview: a header, the rows (or
// the help) and a line of keys.
func (p Projects) View() string {
	if p.shown >= 0 {
		return p.list[p.shown].m.View()
	}
	if p.Width <= 0 || p.Height <= 0 {
		return ""
	}
	bodyH := max(0, p.Height-2)
	var body []string
	if p.helping {
		body = p.overviewHelp()
	} else {
		body = p.overviewRows(bodyH)
	}
	lines := make([]string, 0, p.Height)
	lines = append(lines, p.Ink(p.overviewHeader()))
	for i := range bodyH {
		line := ""
		if i < len(body) {
			line = body[i]
		}
		lines = append(lines, " "+p.Fitted(line, p.Cols))
	}
	lines = append(lines, p.Ink(p.overviewFooter()))
	return strings.Join(lines[:min(len(lines), p.Height)], "\n")
}

// overviewHeader counts the projects, their unread notices, live workers
// and today's spend.
func (p *Projects) overviewHeader() string {
	var unread, live int
	var usdSum float64
	spent := false
	for i := range p.list {
		s := &p.list[i].sum
		unread, live, usdSum, spent = unread+s.unread, live+s.live, usdSum+s.usd, spent || s.spent
	}
	left := " fleetwatch · " + kit.Plural(len(p.list), "project", "projects")
	if unread > 0 {
		mark := "⚑ " + kit.Itoa(unread)
		if !p.Plain {
			mark = p.St.Warn.Render(mark)
		}
		left += " · " + mark
	}
	if spent {
		left += " · " + kit.USD(usdSum) + " today"
	}
	left += " · " + kit.Plural(live, "live worker", "live workers")
	return kit.Fit(p.St.Bar.Render(left), p.Width)
}

func (p *Projects) overviewFooter() string {
	if p.status != "" {
		s := p.status
		if !p.Plain {
			s = p.St.StatusErr.Render(s)
		}
		return kit.Fit(" "+s, p.Width)
	}
	k := &p.Keys
	if p.helping {
		return kit.Fit(" "+p.St.Help.Render("any key closes this help"), p.Width)
	}
	return kit.Fit(" "+p.Help.ShortHelpView([]key.Binding{k.Projects.Open, k.Projects.Next, k.Projects.Prev, k.Help, k.Quit}), p.Width)
}

// rowsShown is how many projects the overview lists at once, under its
// column names.
func (p *Projects) rowsShown() int { return max(1, p.Height-3) }

// laneColumn is one column of lane counts: its name and the lanes summed.
type laneColumn struct {
	name  string
	lanes []model.Lane
}

// laneColumns are the counts the overview shows: every lane on a wide
// terminal, the ready and the parked lanes summed on a narrow one.
func (p *Projects) laneColumns() []laneColumn {
	if p.Width >= 100 {
		names := []string{"drft", "bugs", "feat", "prog", "rev", "ambg", "blkd", "done"}
		cols := make([]laneColumn, len(model.Lanes))
		for i, l := range model.Lanes {
			cols[i] = laneColumn{names[i], []model.Lane{l}}
		}
		return cols
	}
	return []laneColumn{
		{"drft", []model.Lane{model.Drafts}}, {"rdy", []model.Lane{model.Bugs, model.Features}},
		{"prog", []model.Lane{model.InProgress}}, {"rev", []model.Lane{model.ReviewNeeded}},
		{"park", []model.Lane{model.Ambiguous, model.Blocked}}, {"done", []model.Lane{model.Completed}},
	}
}

// overviewRows draws the column names and the window of rows holding the
// cursor.
func (p *Projects) overviewRows(h int) []string {
	nameW := len("project")
	for i := range p.list {
		nameW = max(nameW, min(20, ansi.StringWidth(p.list[i].name)))
	}
	cols := p.laneColumns()
	head := "  " + kit.Fit("project", nameW)
	for _, c := range cols {
		head += kit.FitRight(c.name, 5)
	}
	head += "  " + kit.Fit("workers", 10) + kit.Fit("⚑", 4) + kit.FitRight("today", 8) + "  queue head"
	out := []string{p.St.Header.Render(head)}
	vis := max(1, h-1)
	p.offset = max(min(p.offset, p.cursor), p.cursor-vis+1)
	for i := p.offset; i < len(p.list) && i < p.offset+vis; i++ {
		line := p.projectLine(&p.list[i], i == p.cursor, nameW, cols)
		if i == p.cursor {
			line = p.Highlight(kit.Fit(line, p.Cols))
		}
		out = append(out, line)
	}
	return out
}

// projectLine is one project's row: its counts, or what keeps it shut.
func (p *Projects) projectLine(e *projectEntry, selected bool, nameW int, cols []laneColumn) string {
	line := kit.Gutter(selected) + kit.Fit(e.name, nameW)
	bad := func(s string) string {
		if p.Plain || selected {
			return s
		}
		return p.St.Bad.Render(s)
	}
	if e.m == nil {
		return line + "  " + bad("⚠ "+e.root+": "+e.problem)
	}
	s := &e.sum
	if !s.loaded {
		return line + "  " + p.St.Dim.Render("reading…")
	}
	for _, c := range cols {
		n := 0
		for _, l := range c.lanes {
			n += s.counts[laneIndex(l)]
		}
		line += kit.FitRight(kit.Itoa(n), 5)
	}
	w := kit.Itoa(s.live) + " live"
	if s.stale > 0 {
		w += " ◌" + kit.Itoa(s.stale)
	}
	if s.dead > 0 {
		w += " ✗" + kit.Itoa(s.dead)
	}
	line += "  " + kit.Fit(w, 10)
	notes := ""
	if s.unread > 0 {
		notes = "⚑ " + kit.Itoa(s.unread)
	}
	line += kit.Fit(notes, 4)
	spent := ""
	if s.spent {
		spent = kit.USD(s.usd)
	}
	line += kit.FitRight(spent, 8) + "  "
	switch {
	case s.problem != "":
		line += bad("⚠ " + s.problem)
	case s.queue == "":
		line += p.St.Dim.Render("empty")
	default:
		line += s.queue
	}
	return line
}

// laneIndex is l's place in model.Lanes.
func laneIndex(l model.Lane) int {
	for i, x := range model.Lanes {
		if x == l {
			return i
		}
	}
	return 0
}

// overviewHelp is `?` on the overview: its keys, those between projects,
// and what the columns mean.
func (p *Projects) overviewHelp() []string {
	k := &p.Keys
	out := []string{p.St.Bold.Render("Projects overview")}
	out = append(out, p.flowHelp([]*key.Binding{&k.Up, &k.Down, &k.Projects.Open, &k.Projects.Next, &k.Projects.Prev, &k.Help, &k.Quit})...)
	out = append(out, "", p.St.Bold.Render("Inside a project"),
		"  "+k.Projects.Overview.Help().Key+" back to this overview · "+k.Projects.Next.Help().Key+" / "+k.Projects.Prev.Help().Key+
			" the next / previous project · the rest as in one project's cockpit",
		"  the header names the other projects with unread notices: ⚑ api 2",
		"", p.St.Bold.Render("Columns"),
		"  drft bugs feat prog rev ambg blkd done   plans in each lane (narrow: rdy = bugs+features, park = ambg+blkd)",
		"  workers   live, ◌ stale and ✗ dead workers",
		"  ⚑         unread notices (read them with N inside the project)",
		"  today     what the project's runs spent today",
		"  queue head  the merge queue's first entry and its state; ⚠ a problem reading the project")
	return out
}

// flowHelp is bindings side by side, as the help's "every pane" line.
func (p *Projects) flowHelp(bs []*key.Binding) []string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.Help().Key + " " + b.Help().Desc
	}
	return wrapWords(strings.Join(parts, " · "), max(20, p.Cols-2))
}
