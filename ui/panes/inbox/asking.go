package inbox

import (
	"slices"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/ui/verbs"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// The runs waiting for input: a conversation's agent asked a question or
// for permission, and its driver put it in the state file (State.Asking)
// until a person answers. The rows come from the workers' reading, so an
// answered question leaves as soon as the driver writes its state file
// again. y allows (the first option that allows), n denies, enter picks
// an option or answers in words; every answer goes through verbs.Send.

// askingState is the state cell of a run waiting for input.
const askingState = "? waiting for input"

// askingRows are the runs of w waiting for input that the filter f lets
// through, in the workers' order.
func askingRows(w *uictx.Workers, f string) []uictx.WorkerRow {
	if w == nil {
		return nil
	}
	var out []uictx.WorkerRow
	for _, r := range w.Rows {
		a := r.St.Asking
		if a == nil || r.Child || (r.Health != look.Live && r.Health != look.Stale) {
			continue
		}
		if f == "" || kit.AnyContains(f, r.St.AgentID, kit.PlanSlug(r.St.Plan), a.Question, "waiting for input") {
			out = append(out, r)
		}
	}
	return out
}

// askingRow is the selected run waiting for input, nil when the cursor
// is elsewhere.
func (l *Pane) askingRow() *uictx.WorkerRow {
	if i := l.Cursor - len(l.shown) - len(l.paused); i >= 0 && i < len(l.asking) {
		return &l.asking[i]
	}
	return nil
}

// askingWidths widens the columns for the runs' cells.
func askingWidths(rs []uictx.WorkerRow, slug, agent, state, scope *int) {
	for i := range rs {
		st := &rs[i].St
		*slug, *agent = max(*slug, kit.CellWidth(kit.PlanSlug(st.Plan))), max(*agent, kit.CellWidth(st.AgentID))
		*state, *scope = max(*state, kit.CellWidth(askingState)), max(*scope, kit.CellWidth(optionsCell(st.Asking)))
	}
}

// optionsCell is what a request offers, in a word or two.
func optionsCell(a *claims.AskRecord) string {
	if len(a.Options) == 0 {
		return "question"
	}
	return kit.Plural(len(a.Options), "option", "options")
}

// askingLine is a waiting run's row in the inbox's columns: its plan,
// its agent, that it waits, since when, what it offers, the question.
func askingLine(cm *uictx.Common, r *uictx.WorkerRow, c inboxCols, selected bool) string {
	st, a := &r.St, r.St.Asking
	var b strings.Builder
	b.WriteString(kit.Gutter(selected))
	b.WriteString(kit.Fit(termtext.Line(kit.PlanSlug(st.Plan)), c.slug) + " ")
	b.WriteString(kit.Fit(termtext.Line(st.AgentID), c.agent) + " ")
	b.WriteString(kit.FitRight("", c.n) + " ")
	state := kit.Fit(askingState, c.state)
	if !cm.Plain {
		state = cm.St.Info.Bold(true).Render(state)
	}
	b.WriteString(state + " ")
	age := "—"
	if a.Since > 0 {
		age = kit.Coarse(cm.Now - a.Since)
	}
	b.WriteString(kit.Fit(age, c.age) + " ")
	if c.scope > 0 {
		b.WriteString(kit.Fit(optionsCell(a), c.scope) + " ")
	}
	b.WriteString(kit.Fit(termtext.Line(a.Question), c.problem))
	return b.String()
}

// askingLines are what the preview shows of a waiting run: the question
// whole, its options, and the keys that answer it.
func askingLines(cm *uictx.Common, r *uictx.WorkerRow) []string {
	st, a := &r.St, r.St.Asking
	out := []string{termtext.Line(st.AgentID + "'s run of " + kit.PlanSlug(st.Plan) + " · waiting for input")}
	if a.Since > 0 {
		out = append(out, cm.St.Dim.Render("asked "+kit.Coarse(cm.Now-a.Since)+" ago · request "+termtext.Line(a.ID)))
	}
	out = append(out, "")
	for _, l := range strings.Split(strings.TrimRight(a.Question, "\n"), "\n") {
		out = append(out, termtext.Line(l))
	}
	if len(a.Options) > 0 {
		out = append(out, "", cm.St.Bold.Render("Options:"))
	}
	for i, o := range a.Options {
		allow := ""
		if o.Allow {
			allow = " (allows)"
		}
		out = append(out, "  "+strconv.Itoa(i+1)+". "+termtext.Line(o.Label)+cm.St.Dim.Render(allow))
	}
	return append(out, "", cm.St.Dim.Render("y allows (its first allowing option), n denies, enter picks an option or answers in words"))
}

// canAllow says whether y applies to r, and why not.
func canAllow(r *uictx.WorkerRow) (bool, string) {
	switch {
	case r == nil:
		return false, pickAsking
	case r.St.Asking.FirstAllowing() == "":
		return false, termtext.Line(r.St.AgentID) + "'s question offers nothing to allow: enter answers it"
	}
	return true, ""
}

// pickAsking is the reason every answer key gives without a waiting run.
const pickAsking = "select a run waiting for input in the inbox pane (7)"

// syncAnswerKeys enables y and n for the selected waiting run.
func (l *Pane) syncAnswerKeys(pc *uictx.Ctx, set uictx.SetKey) {
	k := &pc.Keys.Inbox
	r := l.askingRow()
	if pc.Shown != l.id {
		r = nil
	}
	ok, why := canAllow(r)
	set(&k.Allow, ok, "allow: "+why)
	set(&k.Deny, r != nil, "deny: "+pickAsking)
	// Enter answers a waiting run: the footer says so.
	if r != nil {
		k.Open.SetHelp("enter", "answer")
	} else {
		k.Open.SetHelp("enter", "read")
	}
}

// answerYes is y (allow) or n (deny): the selected run's request
// answered at once.
func (l *Pane) answerYes(pc *uictx.Ctx, deny bool) tea.Msg {
	r := l.askingRow()
	if r == nil {
		return nil
	}
	option := ""
	if !deny {
		if option = r.St.Asking.FirstAllowing(); option == "" {
			return nil
		}
	}
	return verbs.SendCmd(pc.Opt.Tree, pc.Claims, *r, verbs.Answer(pc.Opt.Agent, r.St.Asking.ID, option, deny, ""))
}

// askAnswer is enter on a waiting run: a dialog that picks one of the
// request's options (tab) or answers in words (typed, which wins).
func (l *Pane) askAnswer(pc *uictx.Ctx) tea.Msg {
	r := l.askingRow()
	if r == nil {
		return nil
	}
	if pc.Opt.ReadOnly {
		return uictx.Status("✗ read-only: viewers can't answer an agent", true)
	}
	row, a := *r, *r.St.Asking
	in := pc.TextField()
	in.Placeholder = "an answer in words"
	in.CharLimit = claims.MaxMailText
	in.Width = 60
	cmd := in.Focus()
	var choices []model.Lane
	for i, o := range a.Options {
		// Numbered: two options may share a label.
		choices = append(choices, model.Lane(strconv.Itoa(i+1)+" "+termtext.Line(o.Label)))
	}
	body := []string{termtext.Line(row.St.AgentID) + " asks: " + termtext.Line(a.Question)}
	if len(choices) > 0 {
		body = append(body, "tab picks an option; words typed below answer instead.")
	}
	t, by, c := pc.Opt.Tree, pc.Opt.Agent, pc.Claims
	return uictx.BatchReq{uictx.QuestionReq{Q: uictx.Question{
		Title: "Answer " + termtext.Line(row.St.AgentID), Body: body, Choices: choices, Verb: "answer", Input: &in,
		Refuse: func(to model.Lane, s string) string {
			if s == "" && to == "" {
				return "type an answer: the question offers no options"
			}
			return ""
		},
		Do: func(to model.Lane, s string) tea.Cmd {
			option := ""
			if i := slices.Index(choices, to); s == "" && i >= 0 {
				option = a.Options[i].ID
			}
			return verbs.SendCmd(t, c, row, verbs.Answer(by, a.ID, option, false, s))
		},
	}}, cmd}
}
