package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"fleetwatch/internal/termtext"
	"fleetwatch/landing"
	"fleetwatch/model"
)

// The merge keys A, X, + and m act on what is selected where they are
// pressed: the Merge pane's row, or in the Plans pane the selected plan's
// own candidate. Anywhere else, or without a candidate, they are off and
// say why; never do they act on a row the operator cannot see.

// candidate is the candidate the merge keys act on here, nil when none.
func (m *Model) candidate() *landing.Status {
	switch m.pane {
	case mergePane:
		return m.merge.row()
	case plansPane:
		// Its own: the candidate of the plan where it is, in review-needed/.
		if sel := m.plans.selected(); sel.row != nil {
			if r := m.merge.bySlug(sel.row.Plan.Slug); r != nil && r.Rel == sel.row.Plan.Rel {
				return r
			}
		}
	}
	return nil
}

// bySlug is slug's candidate in the last listing, nil when it has none.
func (l *mergeList) bySlug(slug string) *landing.Status {
	for i := range l.listing.Items {
		if l.listing.Items[i].Slug == slug {
			return &l.listing.Items[i]
		}
	}
	return nil
}

// noCandidate is why verb has nothing to act on here.
func (m *Model) noCandidate(verb string) string {
	if m.pane != plansPane {
		return verb + ": select a candidate in the merge pane (6)"
	}
	sel := m.plans.selected()
	switch {
	case sel.row == nil:
		return verb + ": select a plan in review-needed/ (or a candidate in the merge pane, 6)"
	case !m.merge.loaded:
		return verb + ": the merge queue is not read yet; 6 shows it"
	}
	return verb + ": " + termtext.Line(sel.row.Plan.Slug) + " is not a merge candidate: only plans in review-needed/ are"
}

// candidateKeys sets A, X, + and m for the candidate here.
func (m *Model) candidateKeys(set setKey) {
	k := &m.keys.Merge
	r := m.candidate()
	if r == nil {
		for _, b := range []struct {
			b    *key.Binding
			verb string
		}{{&k.Approve, "approve"}, {&k.NeedsWork, "needs work"}, {&k.Add, "add"}} {
			set(b.b, false, m.noCandidate(b.verb))
		}
		m.landKey(set, nil)
		return
	}
	open := r.State != landing.Landed && r.Commit != ""
	live := open && r.State != landing.NoChange
	set(&k.Approve, live && !approvedTip(r), approveWhy(r))
	set(&k.NeedsWork, open && r.Rel != "", needsWorkWhy(r))
	set(&k.Add, live && r.Position == nil && approvedTip(r), addWhy(r))
	m.landKey(set, r)
}

func needsWorkWhy(r *landing.Status) string {
	switch {
	case r.State == landing.Landed:
		return "needs work: " + termtext.Line(r.Slug) + " has landed"
	case r.Commit == "":
		return "needs work: " + termtext.Line(r.Slug) + " has no branch to send back"
	}
	return "needs work: " + termtext.Line(r.Slug) + "'s plan is not in review-needed/"
}

// landKey sets m: in the Merge pane it lands the queue's head; in the
// Plans pane only when the selected plan's candidate is that head.
func (m *Model) landKey(set setKey, r *landing.Status) {
	k := &m.keys.Merge
	h := m.merge.head()
	switch {
	case m.opt.Self == "":
		set(&k.Land, false, "land: this UI does not know its own binary, so it cannot start the lander")
	case m.pane == mergePane:
		set(&k.Land, h != nil, "land: the queue is empty (+ adds an approved candidate)")
	case m.pane != plansPane:
		set(&k.Land, false, "land: switch to the merge pane (6)")
	case r == nil:
		set(&k.Land, false, m.noCandidate("land"))
	case r.Position == nil:
		set(&k.Land, false, "land: "+termtext.Line(r.Slug)+" is not queued; only the queue's head lands")
	default:
		set(&k.Land, h == r, "land: "+termtext.Line(r.Slug)+" is at place "+itoa(*r.Position)+"; only the queue's head lands")
	}
}

// candidateKey answers A, X, + and m in the Plans pane, on the selected
// plan's candidate.
func (m *Model) candidateKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	k := &m.keys.Merge
	switch {
	case key.Matches(msg, k.Approve):
		m.askApprove()
	case key.Matches(msg, k.NeedsWork):
		return m.askNeedsWork(), true
	case key.Matches(msg, k.Add):
		return m.queueAdd(), true
	case key.Matches(msg, k.Land):
		m.askLand()
	default:
		return nil, false
	}
	return nil, true
}

// leadToCandidate is enter on a "waits for review" notice: the Merge pane
// on that plan's candidate, once the queue is read.
func (m *Model) leadToCandidate(rel string) tea.Cmd {
	cmd := m.setPane(mergePane)
	slug := model.Rel(rel).Slug()
	m.merge.want = slug
	if m.merge.loaded && m.merge.goTo(slug) {
		m.merge.want = ""
	}
	m.syncKeys()
	return cmd
}

// updateAsked takes what answers bring besides an action's result: a
// question asked after another, a landing's end, an edit's steps.
func (m *Model) updateAsked(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case askMsg:
		m.stack.push(msg.d)
		return nil, true
	case landDoneMsg:
		return m.landDone(msg), true
	}
	return m.updateEdit(msg)
}
