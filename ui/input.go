package ui

import (
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"fleetwatch/model"
	"fleetwatch/planfs"
)

// key routes a key press. The order lives here alone: a question (a
// dialog, the spawn form) on top, then the filter being typed, then the
// top overlay (help, the logs, the reader), then the shown pane and the
// keys that work everywhere.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && !m.typing() {
		// Keys that came in one read (over SSH, or a key held down) are
		// one message: each is a key of its own.
		var cmds []tea.Cmd
		for _, r := range msg.Runes {
			cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
		}
		return tea.Batch(cmds...)
	}
	if len(m.settle.held) > 0 {
		// A key is waiting for the screen: this one goes after it.
		if cmd, ok := m.holdKey(msg); ok {
			return cmd
		}
	}
	top := m.stack.top()
	switch {
	case top != nil && top.asks():
		return top.key(m, msg)
	case m.typingFilter() != nil:
		return m.filterKey(msg)
	}
	if m.statusErr {
		m.setStatus("", false)
	}
	if top != nil {
		return top.key(m, msg)
	}
	if cmd, ok := m.globalKey(msg); ok {
		return cmd
	}
	if cmd, ok := m.paneOf(m.pane).update(m, msg); ok {
		return cmd
	}
	if cmd, ok := m.moveKey(msg); ok {
		return cmd
	}
	k := &m.keys
	switch {
	case key.Matches(msg, k.Spawn):
		return m.askSpawn()
	case key.Matches(msg, k.Escape):
		return m.escape()
	default:
		if why, ok := m.why[msg.String()]; ok {
			if cmd, held := m.holdKey(msg); held {
				return cmd
			}
			m.setStatus("✗ "+why, true)
		}
	}
	return nil
}

// globalKey answers the keys that mean the same in every pane: quit,
// help, and moving between panes.
func (m *Model) globalKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	k := &m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return m.quit(), true
	case key.Matches(msg, k.Help):
		m.stack.push(&helpScreen{})
		return nil, true
	case key.Matches(msg, k.Notices):
		return m.openNotices(), true
	case key.Matches(msg, k.Filter):
		return m.startFilter(), true
	case key.Matches(msg, k.NextPane):
		return m.setPane((m.pane + 1) % paneCount), true
	case key.Matches(msg, k.PrevPane):
		return m.setPane((m.pane + paneCount - 1) % paneCount), true
	}
	for i, b := range k.Panes {
		if key.Matches(msg, b) {
			return m.setPane(pane(i)), true
		}
	}
	return nil, false
}

// moveKey moves the shown pane's cursor.
func (m *Model) moveKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	t := m.current()
	d, ok := m.keys.step(msg, t.height, t.len())
	if !ok {
		return nil, false
	}
	return m.moveCursor(d), true
}

// verbKey asks before a verb on the selected plan; the bindings that
// cannot apply are disabled.
func (m *Model) verbKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	k := &m.keys.Plans
	switch {
	case key.Matches(msg, k.Promote):
		m.askPromote()
	case key.Matches(msg, k.Park):
		return m.askPark(), true
	case key.Matches(msg, k.Return):
		m.askReturn()
	case key.Matches(msg, k.Release):
		m.askRelease()
	case key.Matches(msg, k.Recover):
		m.askRecover()
	case key.Matches(msg, k.Complete):
		m.askComplete()
	default:
		return nil, false
	}
	return nil, true
}

// escape clears the marks in the workers pane, else the pane's filter.
func (m *Model) escape() tea.Cmd {
	if m.pane == workersPane && len(m.wrk.marks) > 0 {
		m.wrk.marks = nil
		m.wrk.invalidate()
		return nil
	}
	if m.clearFilter() {
		return m.schedulePreview()
	}
	return nil
}

// typing reports whether a text field takes the keys now.
func (m *Model) typing() bool {
	if top := m.stack.top(); top != nil && top.typing() {
		return true
	}
	return m.typingFilter() != nil
}

func (m *Model) quit() tea.Cmd {
	m.Close()
	return tea.Quit
}

func (m *Model) moveCursor(d int) tea.Cmd {
	m.current().move(d)
	m.syncKeys()
	return m.schedulePreview()
}

func (m *Model) setPane(p pane) tea.Cmd {
	m.pane = p
	m.syncKeys()
	switch p {
	case worktreesPane:
		return m.requestTrees()
	case workersPane:
		return m.requestWorkers()
	}
	return m.schedulePreview()
}

func (m *Model) switchLane(d int) tea.Cmd {
	i := 0
	for j, l := range model.Lanes {
		if l == m.plans.lane {
			i = j
		}
	}
	m.plans.lanePick[m.plans.lane] = m.plans.key()
	m.plans.lane = model.Lanes[(i+d+len(model.Lanes))%len(model.Lanes)]
	m.plans.cursor, m.plans.offset = 0, 0
	m.plans.keys = nil
	m.plans.rebuild(m)
	m.plans.goTo(m.plans.lanePick[m.plans.lane])
	m.syncKeys()
	return m.schedulePreview()
}

// previewShown reports whether the preview is on screen.
func (m *Model) previewShown() bool {
	if m.reading() {
		return true
	}
	_, ph := m.plansSplit(m.height - 2)
	return m.pane == plansPane && ph > 0
}

func (m *Model) previewWidth() int { return max(20, m.plans.pv.vp.Width-2) }

func (m *Model) previewWant(r *model.BoardRow) string {
	// The note (park reason, lint) can change with the plan's file unchanged.
	return previewKey(r.Plan.Rel, r.Plan.ModTime, m.previewWidth()) + "\x00" + m.previewNote(r)
}

// schedulePreview renders the selected plan once the cursor rests on it.
func (m *Model) schedulePreview() tea.Cmd {
	r := m.selectedPlan()
	if r == nil {
		if m.plans.pv.rel != "" {
			m.plans.pv.rel, m.plans.pv.key = "", ""
			m.plans.pv.setContent("")
		}
		return nil
	}
	if !m.previewShown() || m.previewWant(r) == m.plans.pv.key {
		return nil
	}
	m.plans.pv.seq++
	seq := m.plans.pv.seq
	if m.plans.pv.rel != r.Plan.Rel {
		m.plans.pv.rel = r.Plan.Rel
		m.plans.pv.setContent("")
		m.plans.pv.vp.GotoTop()
	}
	return tea.Tick(previewDelay, func(time.Time) tea.Msg { return previewDueMsg{seq: seq} })
}

// force says whether acting on a plan overrides someone: another agent's
// lease, or an in-progress plan nobody holds.
func (m *Model) force(lease *model.Lease, lane model.Lane) bool {
	if lease != nil {
		return lease.Corrupt != "" || lease.AgentID != m.opt.Agent
	}
	return lane == model.InProgress
}

// holder says who holds a plan, as a sentence for a dialog.
func (m *Model) holder(l *model.Lease) string {
	switch {
	case l == nil:
		return "No one holds it."
	case l.Corrupt != "":
		return "Its lease file is unreadable (" + l.Corrupt + ")."
	case l.Active(m.now):
		return l.AgentID + " holds it" + heldOnAside(l) + ", " + timeLeft(l, m.now) + "."
	}
	return l.AgentID + " held it" + heldOnAside(l) + "; the lease expired " + span(m.now-l.ExpiresAt) + " ago."
}

// takes warns when confirming takes a plan from a live worker.
func (m *Model) takes(l *model.Lease, what string) []string {
	if l != nil && l.Active(m.now) && l.AgentID != m.opt.Agent {
		return []string{"⚠ " + what + " takes it from " + l.AgentID + heldOnAside(l) + ", which may still be working on it."}
	}
	return nil
}

// planExists reports whether the latest scan saw a plan at rel.
func (m *Model) planExists(rel string) bool {
	return m.d != nil && m.d.rels[rel]
}

// ask opens a dialog about rel whose action is only taken if rel's lease is
// still the one the operator saw: a worker that claims or recovers the plan
// while the dialog is open must not lose it to a stale confirmation.
func (m *Model) ask(d *dialog, rel string, lease *model.Lease) {
	d.rel, d.seen, d.existed = rel, leasePrint(lease), m.planExists(rel)
	if m.remote != nil {
		// No lease file to look at again: the backend's compare-and-swap
		// on the lease the operator saw refuses one that changed, and
		// each scan closes a dialog whose plan changed (dropStaleDialog).
		m.stack.push(d)
		return
	}
	t, seen, existed, do := m.opt.Tree, d.seen, d.existed, d.do
	d.do = func(to model.Lane, text string) tea.Cmd {
		inner := do(to, text)
		return func() tea.Msg {
			// The plan's place and lease are read once, here: the words
			// name the holder of the moment, and the plan where it is.
			cur, found := planNow(t, rel)
			now := t.ReadLease(rel)
			if cur != rel && cur != "" {
				now = t.ReadLease(cur)
			}
			// A plan gone altogether is left to the verb, whose "not
			// found" says as much.
			moved := found && cur != "" && (cur == rel) != existed
			if leasePrint(t.ReadLease(rel)) != seen || moved {
				return actionMsg{err: fmt.Errorf("%s changed while you decided (%s); nothing done, look again", slugOf(rel), changedWords(rel, cur, now))}
			}
			return inner()
		}
	}
	m.stack.push(d)
}

// planNow finds on disk, through the engine, the plan that was at rel: rel
// itself or the same file in another lane, "" when gone. found is false
// when the name cannot be looked up.
func planNow(t *planfs.Tree, rel string) (cur string, found bool) {
	_, name, err := planfs.SplitRel(rel)
	if err != nil {
		return "", false
	}
	hits, err := t.FindSlug(slugOf(rel), model.Lanes...)
	if err != nil {
		return "", false
	}
	rels := map[string]bool{}
	for _, h := range hits {
		if n := model.Rel(h).Name(); n == name {
			rels[h] = true
		}
	}
	return placeIn(rels, rel), true
}

func (m *Model) askPromote() {
	rel, row, lease := m.target()
	problems := planfs.PromoteProblems(row.Plan.Header)
	body := []string{"Move " + rel + " to a ready lane, where agents can pick it."}
	for _, p := range problems {
		body = append(body, "⚠ "+p)
	}
	verb := "promote"
	if len(problems) > 0 {
		verb = "promote anyway"
	}
	t, agent, force := m.opt.Tree, m.opt.Agent, len(problems) > 0
	m.ask(&dialog{
		title: "Promote " + row.Plan.Slug, body: body, verb: verb,
		choices: []model.Lane{model.Features, model.Bugs},
		do: m.remoteOr(model.Promote, rel, lease, func(to model.Lane, _ string) tea.Cmd {
			return promoteCmd(t, rel, to, agent, force)
		}),
	}, rel, lease)
}

func (m *Model) askPark() tea.Cmd {
	rel, row, lease := m.target()
	lane := model.Rel(rel).Lane()
	in := m.textField()
	in.Placeholder = "why (goes to the event log)"
	in.CharLimit = 300
	in.Width = 50
	cmd := in.Focus()
	body := []string{"Set " + rel + " aside; u returns it to where it came from."}
	if lease != nil || lane == model.InProgress {
		body = append(body, m.holder(lease))
	}
	body = append(body, m.takes(lease, "Parking")...)
	t, agent, force := m.opt.Tree, m.opt.Agent, m.force(lease, lane)
	m.ask(&dialog{
		title: "Park " + row.Plan.Slug, body: body, verb: "park", input: &in,
		choices: []model.Lane{model.Blocked, model.Ambiguous},
		do: m.remoteOr(model.Park, rel, lease, func(to model.Lane, reason string) tea.Cmd {
			return parkCmd(t, rel, to, agent, reason, force)
		}),
	}, rel, lease)
	return cmd
}

func (m *Model) askReturn() {
	rel, row, lease := m.target()
	lane := model.Rel(rel).Lane()
	body := []string{"Send " + rel + " back to the ready lane it came from."}
	if lane == model.InProgress {
		body = append(body, m.holder(lease))
	}
	body = append(body, m.takes(lease, "Returning")...)
	t, agent, force := m.opt.Tree, m.opt.Agent, m.force(lease, lane)
	m.ask(&dialog{
		title: "Return " + row.Plan.Slug, body: body, verb: "return",
		do: m.remoteOr(model.Return, rel, lease, func(model.Lane, string) tea.Cmd { return returnCmd(t, rel, agent, force) }),
	}, rel, lease)
}

func (m *Model) askComplete() {
	rel, row, lease := m.target()
	body := []string{"Finish " + rel + ": review-needed/ waits for a person, completed/ is done.",
		m.holder(lease)}
	body = append(body, m.takes(lease, "Completing")...)
	t, agent, force := m.opt.Tree, m.opt.Agent, m.force(lease, model.InProgress)
	m.ask(&dialog{
		title: "Complete " + row.Plan.Slug, body: body, verb: "move",
		choices: []model.Lane{model.ReviewNeeded, model.Completed},
		do: m.remoteOr(model.Complete, rel, lease, func(to model.Lane, _ string) tea.Cmd {
			return completeCmd(t, rel, to, agent, force)
		}),
	}, rel, lease)
}
