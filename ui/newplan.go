package ui

import (
	"slices"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// The new-plan form's fields, in tab order.
const (
	npSlug = iota
	npTitle
	npLane
	npValue
	npPriority
	npModels
	npDepends
	npCount
)

var (
	npValues     = []string{"high", "medium", "low"}
	npPriorities = []string{"P1", "P2", "P3"}
	npNames      = [npCount]string{"slug", "title", "lane", "value", "priority", "models", "depends on"}
)

// newPlanForm is `n`: what a new plan says about itself, checked as it is
// typed; enter writes it through the engine and opens it in the editor.
type newPlanForm struct {
	gen    int
	inputs [npCount]*textinput.Model // the text fields; nil on a choice
	choice [npCount]int              // the choices' picks
	lanes  []model.Lane
	models []string // tiers, then endpoints.yaml's models
	slugs  []string // every plan's slug, sorted, for Depends on
	// snap, deps and hist judge the slug and Depends on as typed; snap
	// is the board when the form opened, deps its index.
	snap    *model.Snapshot
	deps    *model.DepIndex
	hist    model.History
	focus   int
	warn    string // Depends on's live warning
	problem string // endpoints.yaml could not be read
	err     string
	busy    bool // the engine is writing it
}

// newPlanOfferMsg brings what the form offers, read off the UI goroutine.
type newPlanOfferMsg struct {
	gen     int
	models  []string
	problem string
	hist    model.History
}

// askNewPlan reads the models endpoints.yaml names, and git's completed
// plans, then opens the form.
func (m *Model) askNewPlan() tea.Cmd {
	m.formGen++
	gen, t := m.formGen, m.Opt.Tree
	return func() tea.Msg {
		offer := look.Offer(t.Project)
		msg := newPlanOfferMsg{gen: gen, models: append([]string(nil), spawnTiers...), problem: offer.Problem, hist: t.History()}
		for _, ep := range offer.Endpoints {
			if ep.Model != "" && !slices.ContainsFunc(msg.models, func(x string) bool { return strings.EqualFold(x, ep.Model) }) {
				msg.models = append(msg.models, ep.Model)
			}
		}
		msg.hist("") // git runs here, not on the first key typed in the form
		return msg
	}
}

func (m *Model) openNewPlan(msg newPlanOfferMsg) tea.Cmd {
	if msg.gen != m.formGen || m.stack.top() != nil || m.d == nil {
		return nil // the operator moved on meanwhile
	}
	f := &newPlanForm{gen: msg.gen, lanes: model.NewPlanLanes(), models: msg.models, problem: msg.problem, hist: msg.hist}
	f.snap = &model.Snapshot{Plans: make([]model.Plan, 0, len(m.d.Board.Rows))}
	for i := range m.d.Board.Rows {
		f.snap.Plans = append(f.snap.Plans, *m.d.Board.Rows[i].Plan)
		f.slugs = append(f.slugs, m.d.Board.Rows[i].Plan.Slug)
	}
	sort.Strings(f.slugs)
	f.deps = model.NewDepIndex(f.snap)
	for i, ph := range map[int]string{npSlug: "fix-login", npTitle: "what it is for, in a few words", npModels: "tiers or model names, comma separated", npDepends: "slugs, comma separated"} {
		in := m.newInput(ph, 200)
		in.Width = 40
		f.inputs[i] = &in
	}
	f.choice[npValue], f.choice[npPriority] = 1, 1 // medium, P2
	m.stack.push(f)
	return f.focusField(npSlug)
}

func (f *newPlanForm) focusField(i int) tea.Cmd {
	f.focus = (i + npCount) % npCount
	for _, in := range f.inputs {
		if in != nil {
			in.Blur()
		}
	}
	if in := f.inputs[f.focus]; in != nil {
		return in.Focus()
	}
	return nil
}

func (*newPlanForm) asks() bool     { return true }
func (f *newPlanForm) typing() bool { return f.inputs[f.focus] != nil }

func (f *newPlanForm) updateInput(msg tea.Msg) tea.Cmd {
	in := f.inputs[f.focus]
	if in == nil {
		return nil
	}
	var cmd tea.Cmd
	*in, cmd = in.Update(msg)
	return cmd
}

// choices are the field's values when it is a choice.
func (f *newPlanForm) choices(i int) []string {
	switch i {
	case npLane:
		out := make([]string, len(f.lanes))
		for j, l := range f.lanes {
			out[j] = string(l)
		}
		return out
	case npValue:
		return npValues
	case npPriority:
		return npPriorities
	}
	return nil
}

func (f *newPlanForm) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	k, fk := &m.Keys.Ask, &m.Keys.Form
	switch {
	case key.Matches(msg, k.Cancel):
		m.stack.remove(f)
		return nil
	case f.busy:
		return nil // the engine is writing it; its answer closes the form
	case key.Matches(msg, k.Confirm):
		return m.submitNewPlan(f)
	case key.Matches(msg, fk.NextField):
		return f.focusField(f.focus + 1)
	case key.Matches(msg, fk.PrevField):
		return f.focusField(f.focus - 1)
	}
	f.err = ""
	if cs := f.choices(f.focus); cs != nil {
		switch {
		case key.Matches(msg, fk.NextValue):
			f.choice[f.focus] = (f.choice[f.focus] + 1) % len(cs)
		case key.Matches(msg, fk.PrevValue):
			f.choice[f.focus] = (f.choice[f.focus] + len(cs) - 1) % len(cs)
		}
		return nil
	}
	if key.Matches(msg, k.Right) && f.complete() {
		return nil
	}
	cmd := f.updateInput(msg)
	f.judgeDeps()
	return cmd
}

// offered is what the focused list field offers for the word being typed.
func (f *newPlanForm) offered() (head string, matches []string) {
	var pool []string
	switch f.focus {
	case npModels:
		pool = f.models
	case npDepends:
		pool = f.slugs
	default:
		return "", nil
	}
	v := f.inputs[f.focus].Value()
	cut := strings.LastIndexByte(v, ',') + 1
	head, word := v[:cut], strings.ToLower(strings.TrimSpace(v[cut:]))
	have := map[string]bool{}
	for _, s := range model.SplitList(head) {
		have[strings.ToLower(strings.TrimSpace(s))] = true
	}
	for _, s := range pool {
		if !have[strings.ToLower(s)] && strings.HasPrefix(strings.ToLower(s), word) {
			matches = append(matches, s)
		}
	}
	return head, matches
}

// complete takes the first offered value for the word being typed (→ at
// the end of the field).
func (f *newPlanForm) complete() bool {
	in := f.inputs[f.focus]
	head, matches := f.offered()
	if in == nil || len(matches) == 0 || in.Position() < len([]rune(in.Value())) {
		return false
	}
	if head != "" && !strings.HasSuffix(head, " ") {
		head += " "
	}
	in.SetValue(head + matches[0])
	in.CursorEnd()
	f.judgeDeps()
	return true
}

// judgeDeps says which Depends on slugs name no plan or make a cycle.
func (f *newPlanForm) judgeDeps() {
	deps := model.SplitList(f.inputs[npDepends].Value())
	f.warn = ""
	var words []string
	for _, p := range f.deps.Proposed(strings.TrimSpace(f.inputs[npSlug].Value()), deps, f.hist) {
		what := "no plan is called " + p.Slug
		if p.Reason == "cycle" {
			what = p.Slug + " would make a cycle"
		}
		words = append(words, what)
	}
	if len(words) > 0 {
		f.warn = termtext.Line("⚠ " + strings.Join(words, "; ") + " (a warning: it is written anyway)")
	}
}

// plan is the form as a new plan.
func (f *newPlanForm) plan() model.NewPlan {
	return model.NewPlan{
		Slug: f.inputs[npSlug].Value(), Title: f.inputs[npTitle].Value(),
		Lane: f.lanes[f.choice[npLane]], Value: npValues[f.choice[npValue]], Priority: npPriorities[f.choice[npPriority]],
		Preferred: model.SplitList(f.inputs[npModels].Value()), DependsOn: model.SplitList(f.inputs[npDepends].Value()),
	}
}

// submitNewPlan checks the form as the engine will, then has the engine
// write it; the form stays up, busy, until the engine answers.
func (m *Model) submitNewPlan(f *newPlanForm) tea.Cmd {
	n := f.plan().Normalized()
	if err := n.Check(); err != nil {
		f.err = termtext.Line(err.Error())
		return nil
	}
	if rel := model.SlugTaken(f.snap, n.Slug); rel != "" {
		f.err = termtext.Line("slug " + n.Slug + " is taken by " + rel + " (slugs are unique across lanes)")
		return nil
	}
	f.busy = true
	return createPlanCmd(m.Opt.Tree, n, m.Opt.Agent)
}

func (f *newPlanForm) view(m *Model, h int) []string { return m.newPlanView(f, m.Cols, h) }

func (m *Model) newPlanView(f *newPlanForm, w, h int) []string {
	width := min(w-4, 80)
	inner := max(1, width-4)
	var lines []string
	add := func(s string) { lines = append(lines, kit.Fit(s, inner)) }
	dim := func(s string) { add("             " + m.St.Dim.Render(termtext.Line(s))) }
	add(m.St.Title.Render("New plan"))
	add(m.St.Dim.Render(termtext.Line("from the project's plan template, then opened in $VISUAL/$EDITOR")))
	add("")
	for i := range npCount {
		mark := "  "
		if f.focus == i {
			mark = "▸ "
		}
		label := mark + kit.Fit(npNames[i], 10) + " "
		if f.focus == i && !m.Plain {
			label = m.St.Selected.Render(label)
		}
		if cs := f.choices(i); cs != nil {
			v := "‹ " + cs[f.choice[i]] + " ›"
			if !m.Plain {
				v = m.St.Bold.Render(v)
			}
			add(label + v + "  " + m.St.Dim.Render(strings.Join(cs, " ")))
			continue
		}
		// The field takes the box's width, which follows the terminal's.
		f.inputs[i].Width = max(10, inner-14)
		add(label + f.inputs[i].View())
		if f.focus == i && (i == npModels || i == npDepends) {
			if _, matches := f.offered(); len(matches) > 0 {
				dim("→ " + strings.Join(matches[:min(len(matches), 8)], " "))
			}
		}
	}
	if f.problem != "" {
		add(m.St.Warn.Render(termtext.Line("⚠ endpoints.yaml: " + f.problem)))
	}
	for _, l := range wrapWords(f.warn, inner) {
		add(m.St.Warn.Render(l))
	}
	switch {
	case f.err != "":
		for _, l := range wrapWords("✗ "+f.err, inner) {
			if !m.Plain {
				l = m.St.StatusErr.Render(l)
			}
			add(l)
		}
	case f.busy:
		add("writing…")
	default:
		add("")
	}
	add(m.St.Help.Render("tab/↑/↓ field · ←/→ change, → completes · enter write · esc cancel"))
	box := m.St.Dialog.Width(width).Render(strings.Join(lines, "\n"))
	return strings.Split(m.R.Place(w, h, lipgloss.Center, lipgloss.Center, box), "\n")
}
