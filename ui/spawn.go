package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// spawnTiers are the tiers the form offers when the project has no
// endpoint: a tier alone runs only endpoints.yaml's top-level executor,
// which a project with endpoints seldom has (the worker would exit 2, "no
// executor").
var spawnTiers = []string{"small", "mid", "reasoner", "frontier"}

// The spawn form's fields, in tab order.
const (
	fieldAs = iota
	fieldModel
	fieldAgent
	fieldRun
	fieldMax
	fieldCount
)

// spawnForm asks how to start a worker: as a tier or an endpoint, which
// model, which agent id, whether to run the executor, how many plans.
type spawnForm struct {
	gen     int
	choices []string        // the registry's endpoints, else the tiers
	offer   look.SpawnOffer // the endpoints, why they cannot be read, git or not
	ids     []string        // each choice's unused default agent id
	choice  int
	model   textinput.Model
	agent   textinput.Model
	max     textinput.Model
	run     bool
	focus   int
	edited  bool // the operator typed an agent id: choices leave it alone
	err     string
}

// spawnFormMsg brings what the form offers, read off the UI goroutine.
type spawnFormMsg struct {
	gen   int
	offer look.SpawnOffer
	ids   []string
}

// spawnedMsg is the outcome of starting a worker.
type spawnedMsg struct {
	spec  proc.SpawnSpec
	child *proc.Child
	err   error
}

// askSpawn reads the registry and picks default agent ids, then opens the form.
func (m *Model) askSpawn() tea.Cmd {
	m.formGen++
	taken := make([]string, len(m.wrk.children))
	for i, c := range m.wrk.children {
		taken[i] = c.State.AgentID
	}
	return spawnFormCmd(m.Opt.Tree.Project, m.formGen, taken)
}

func spawnFormCmd(project string, gen int, taken []string) tea.Cmd {
	return func() tea.Msg {
		// The engine reads endpoints.yaml and asks git; the UI only offers.
		msg := spawnFormMsg{gen: gen, offer: look.Offer(project)}
		for _, c := range spawnChoices(msg.offer) {
			msg.ids = append(msg.ids, proc.UniqueAgentID(project, "ui-"+tree.SafeID(c), taken...))
		}
		return msg
	}
}

func (m *Model) newInput(placeholder string, limit int) textinput.Model {
	in := m.TextField()
	in.Prompt = ""
	in.Placeholder = placeholder
	in.CharLimit = limit
	in.Width = 30
	if m.staticCursors {
		in.Cursor.SetMode(cursor.CursorStatic)
	}
	return in
}

func (m *Model) openForm(msg spawnFormMsg) tea.Cmd {
	if msg.gen != m.formGen || m.dialogShown() != nil || m.logsShown() != nil || m.formShown() != nil {
		return nil // the operator moved on meanwhile
	}
	f := &spawnForm{gen: msg.gen, offer: msg.offer, ids: msg.ids, run: true, choices: spawnChoices(msg.offer)}
	if !f.byEndpoint() {
		f.choice = slices.Index(spawnTiers, "mid")
	}
	f.model = m.newInput("any (or the endpoint's)", 200)
	f.agent = m.newInput("agent id", 80)
	f.max = m.newInput("1", 3)
	f.max.Width = 5
	f.max.SetValue("1")
	f.max.CursorEnd()
	f.agent.SetValue(f.ids[f.choice])
	f.agent.CursorEnd()
	m.stack.push(f)
	return nil
}

// spawnChoices is what the form offers to run as: the project's
// endpoints, in endpoints.yaml's order, else the tiers.
func spawnChoices(o look.SpawnOffer) []string {
	if len(o.Endpoints) == 0 {
		return spawnTiers
	}
	names := make([]string, len(o.Endpoints))
	for i, ep := range o.Endpoints {
		names[i] = ep.Name
	}
	return names
}

// byEndpoint says the choices are endpoints, not tiers.
func (f *spawnForm) byEndpoint() bool { return len(f.offer.Endpoints) > 0 }

func (f *spawnForm) focusField(i int) tea.Cmd {
	f.focus = (i + fieldCount) % fieldCount
	f.model.Blur()
	f.agent.Blur()
	f.max.Blur()
	if in := f.input(); in != nil {
		return in.Focus()
	}
	return nil
}

// input is the focused text field, or nil on a choice.
func (f *spawnForm) input() *textinput.Model {
	switch f.focus {
	case fieldModel:
		return &f.model
	case fieldAgent:
		return &f.agent
	case fieldMax:
		return &f.max
	}
	return nil
}

func (f *spawnForm) updateInput(msg tea.Msg) tea.Cmd {
	in := f.input()
	if in == nil {
		return nil
	}
	var cmd tea.Cmd
	*in, cmd = in.Update(msg)
	return cmd
}

func (f *spawnForm) setChoice(i int) {
	f.choice = (i + len(f.choices)) % len(f.choices)
	if !f.edited && f.choice < len(f.ids) {
		f.agent.SetValue(f.ids[f.choice])
		f.agent.CursorEnd()
	}
}

func (*spawnForm) asks() bool     { return true }
func (f *spawnForm) typing() bool { return f.input() != nil }

func (f *spawnForm) view(m *Model, h int) []string { return m.formView(f, m.Cols, h) }

func (f *spawnForm) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	k, fk := &m.Keys.Ask, &m.Keys.Form
	switch {
	case key.Matches(msg, k.Cancel):
		m.stack.remove(f)
		return nil
	case key.Matches(msg, k.Confirm):
		return m.submitForm(f)
	case key.Matches(msg, fk.NextField):
		return f.focusField(f.focus + 1)
	case key.Matches(msg, fk.PrevField):
		return f.focusField(f.focus - 1)
	}
	f.err = ""
	switch f.focus {
	case fieldAs:
		switch {
		case key.Matches(msg, fk.NextValue):
			f.setChoice(f.choice + 1)
		case key.Matches(msg, fk.PrevValue):
			f.setChoice(f.choice - 1)
		}
		return nil
	case fieldRun:
		if key.Matches(msg, fk.NextValue, fk.PrevValue) {
			f.run = !f.run
		}
		return nil
	}
	before := f.agent.Value()
	cmd := f.updateInput(msg)
	if f.focus == fieldAgent && f.agent.Value() != before {
		f.edited = true
	}
	return cmd
}

// formSpec turns the form into a spawn, or says what is wrong in one line.
func (m *Model) formSpec(f *spawnForm) (proc.SpawnSpec, error) {
	s := proc.SpawnSpec{
		Bin: m.Opt.Self, Project: m.Opt.Tree.Project, ReadOnly: m.Opt.ReadOnly || m.Opt.Tree.ReadOnly,
		Agent: strings.TrimSpace(f.agent.Value()), Model: strings.TrimSpace(f.model.Value()), Run: f.run,
		// Agents working side by side each get their own checkout.
		Worktree: f.run && f.offer.Git,
	}
	if r := m.feed.claims(); r != nil {
		// The worker claims where this face reads, also when --claims
		// chose it rather than fleetwatch.yaml.
		s.Claims = r.c.Backend.Name()
	}
	if f.byEndpoint() {
		s.Endpoint = f.choices[f.choice]
	} else {
		s.Tier = f.choices[f.choice]
	}
	n, err := strconv.Atoi(strings.TrimSpace(f.max.Value()))
	if err != nil || n < 1 || n > proc.MaxSpawnPlans {
		return s, fmt.Errorf("max plans: a number from 1 to %d, not %q", proc.MaxSpawnPlans, f.max.Value())
	}
	s.MaxPlans = n
	if err := s.Check(); err != nil {
		return s, err
	}
	// What this UI knows without looking again; Start looks again.
	for _, c := range m.wrk.children {
		if _, done := c.Exited(); !done && tree.SafeID(c.State.AgentID) == tree.SafeID(s.Agent) {
			return s, fmt.Errorf("%s was started from here (pid %d) and still runs; pick another agent id", s.Agent, c.State.PID)
		}
	}
	for i := range m.wrk.rows {
		r := &m.wrk.rows[i]
		if tree.SafeID(r.St.AgentID) == tree.SafeID(s.Agent) && (r.Health == look.Live || r.Health == look.Stale) {
			return s, fmt.Errorf("%s is running (%s); pick another agent id or stop it first", r.St.AgentID, r.Health)
		}
	}
	return s, nil
}

func (m *Model) submitForm(f *spawnForm) tea.Cmd {
	s, err := m.formSpec(f)
	if err != nil {
		f.err = termtext.Line(err.Error())
		return nil
	}
	m.stack.remove(f)
	m.setStatus("starting "+s.Agent+"…", false)
	return func() tea.Msg {
		c, err := proc.Start(s)
		return spawnedMsg{spec: s, child: c, err: err}
	}
}

func (m *Model) spawned(msg spawnedMsg) tea.Cmd {
	if msg.err != nil {
		m.setStatus("✗ spawn "+msg.spec.Agent+": "+msg.err.Error(), true)
		return nil
	}
	m.wrk.children = append(m.wrk.children, msg.child)
	mode := "claim only"
	if msg.spec.Run {
		mode = "run"
	}
	m.setStatus(fmt.Sprintf("✓ spawned %s (pid %d, %s, up to %s); 4 shows it, l its log",
		msg.spec.Agent, msg.child.State.PID, mode, kit.Plural(max(1, msg.spec.MaxPlans), "plan", "plans")), false)
	return m.requestWorkers()
}

func (m *Model) formView(f *spawnForm, w, h int) []string {
	width := min(w-4, 76)
	inner := max(1, width-4)
	var lines []string
	add := func(s string) { lines = append(lines, kit.Fit(s, inner)) }
	add(m.St.Title.Render("Spawn a worker"))
	for _, l := range wrapWords("Starts `fleetwatch work-once` as cron would: in its own session, so it outlives this screen; its output goes to var/fleet/logs/.", inner) {
		add(l)
	}
	add("")
	label := func(i int, name string) string {
		mark := "  "
		if f.focus == i {
			mark = "▸ "
		}
		s := mark + kit.Fit(name, 10) + " "
		if f.focus == i && !m.Plain {
			s = m.St.Selected.Render(s)
		}
		return s
	}
	choose := func(v string) string {
		s := "‹ " + v + " ›"
		if !m.Plain {
			s = m.St.Bold.Render(s)
		}
		return s
	}
	as := f.choices[f.choice]
	add(label(fieldAs, "run as") + choose(termtext.Line(as)) + "  " + m.St.Dim.Render(termtext.Line(strings.Join(f.choices, " "))))
	detail := "tier " + as
	if f.byEndpoint() {
		ep := f.offer.Endpoints[f.choice]
		detail = "endpoint " + ep.Name + ": tier " + ep.Tier
		if ep.Model != "" {
			detail += ", model " + ep.Model
		}
	} else if len(f.offer.Endpoints) == 0 && f.offer.Problem == "" {
		detail += " (no endpoints.yaml: tiers only)"
	}
	add("             " + m.St.Dim.Render(termtext.Line(detail)))
	if f.offer.Problem != "" {
		for _, l := range wrapWords("⚠ "+termtext.Line(f.offer.Problem), inner-13) {
			add("             " + m.St.Warn.Render(l))
		}
	}
	add(label(fieldModel, "model") + f.model.View())
	add(label(fieldAgent, "agent id") + f.agent.View())
	mode := "run: claim, then the executor works the plan"
	if f.offer.Git {
		mode = "run: claim, then the executor works it in a worktree"
	}
	if !f.run {
		mode = "claim only: claim a plan, run nothing"
	}
	add(label(fieldRun, "mode") + choose(mode))
	add(label(fieldMax, "max plans") + f.max.View())
	add("")
	if f.err != "" {
		e := "✗ " + f.err
		if !m.Plain {
			e = m.St.StatusErr.Render(e)
		}
		add(e)
	} else {
		add("")
	}
	add(m.St.Help.Render("tab/↑/↓ field · ←/→ change · enter start · esc cancel"))
	box := m.St.Dialog.Width(width).Render(strings.Join(lines, "\n"))
	return strings.Split(m.R.Place(w, h, lipgloss.Center, lipgloss.Center, box), "\n")
}

// wrapWords breaks s into lines of at most w cells at spaces.
func wrapWords(s string, w int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= w:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}
