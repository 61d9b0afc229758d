package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// dialog asks before an action: an optional choice of lane, an optional
// reason, what will happen, and enter to go or esc to cancel.
type dialog struct {
	uictx.Question
	choice int
	// problem is why the answer cannot be taken (Question.Refuse).
	problem string
	// rel is the plan asked about and seen its lease as shown (leasePrint).
	rel, seen string
	existed   bool
}

// leasePrint identifies who holds a lease, ignoring heartbeats: the owner,
// its claim and token, or that the file is unreadable, or "none".
func leasePrint(l *model.Lease) string {
	switch {
	case l == nil:
		return "none"
	case l.Corrupt != "":
		return "unreadable"
	}
	return fmt.Sprintf("%s\x00%s\x00%v", l.AgentID, l.Token, l.ClaimedAt)
}

// leaseWords says who holds a lease now, for a refusal.
func leaseWords(l *model.Lease) string {
	switch {
	case l == nil:
		return "no lease now"
	case l.Corrupt != "":
		return "its lease is unreadable now"
	}
	return "now held by " + l.AgentID + kit.HeldOn(l)
}

// changedWords says what became of the plan a dialog was opened on at rel:
// where it is now (cur, "" when gone) and who holds it there, so the
// refusal names the holder when it is shown, also when a claim has moved
// the plan to in-progress/ and its old place has no lease.
func changedWords(rel, cur string, l *model.Lease) string {
	switch {
	case cur == "":
		return "it is gone"
	case cur == rel:
		return leaseWords(l)
	}
	who := "no lease"
	switch {
	case l != nil && l.Corrupt != "":
		who = "its lease unreadable"
	case l != nil:
		who = "held by " + l.AgentID + kit.HeldOn(l)
	}
	return "in " + kit.LaneOf(cur) + "/ now, " + who
}

// placeIn finds the plan that was at rel among rels: rel itself, or the
// same file name in another lane; "" when it is in none.
func placeIn(rels map[string]bool, rel string) string {
	if rels[rel] {
		return rel
	}
	_, name, err := planfs.SplitRel(rel)
	if err != nil {
		return ""
	}
	for _, l := range model.Lanes {
		if r := string(l) + "/" + name; rels[r] {
			return r
		}
	}
	return ""
}

func (*dialog) asks() bool     { return true }
func (d *dialog) typing() bool { return d.Input != nil }

func (d *dialog) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	cmd, closed := d.update(&m.Keys.Ask, msg)
	if closed {
		m.stack.remove(d)
		return m.confirmed(cmd)
	}
	return cmd
}

func (d *dialog) update(k *uictx.AskKeys, msg tea.KeyMsg) (cmd tea.Cmd, closed bool) {
	switch {
	case key.Matches(msg, k.Cancel):
		return nil, true
	case key.Matches(msg, k.Confirm):
		if why := d.refused(); why != "" {
			d.problem = why
			return nil, false
		}
		return d.confirm(), true
	case key.Matches(msg, k.Next, k.Right, k.Prev, k.Left):
		// With a text field, the arrows edit the text; only tab chooses.
		arrow := key.Matches(msg, k.Left, k.Right)
		if len(d.Choices) > 0 && !(arrow && d.Input != nil) {
			step := 1
			if key.Matches(msg, k.Prev, k.Left) {
				step = len(d.Choices) - 1
			}
			d.choice = (d.choice + step) % len(d.Choices)
			return nil, false
		}
	}
	if d.Input == nil {
		// Without a text field, a letter picks the choice it starts.
		for i, c := range d.Choices {
			if msg.String() == string(c[0]) {
				d.choice = i
			}
		}
		if key.Matches(msg, k.Yes) {
			return d.confirm(), true
		}
		if key.Matches(msg, k.No) {
			return nil, true
		}
		return nil, false
	}
	in, cmd := d.Input.Update(msg)
	d.Input = &in
	return cmd, false
}

// refused is why the answer as it stands cannot be taken, "" when it can.
func (d *dialog) refused() string {
	if d.Refuse == nil {
		return ""
	}
	to, text := d.answer()
	return d.Refuse(to, text)
}

// answer is the choice and the text as they are.
func (d *dialog) answer() (model.Lane, string) {
	var to model.Lane
	if len(d.Choices) > 0 {
		to = d.Choices[d.choice]
	}
	text := ""
	if d.Input != nil {
		text = strings.TrimSpace(d.Input.Value())
	}
	return to, text
}

// confirm takes the action with the choice and the text as they are; a
// dialog with nothing to do (one that only tells) closes.
func (d *dialog) confirm() tea.Cmd {
	if d.Do == nil {
		return nil
	}
	return d.Do(d.answer())
}

func (d *dialog) view(m *Model, h int) []string { return m.dialogView(d, m.Cols, h) }

func (m *Model) dialogView(d *dialog, w, h int) []string {
	width := min(w-4, 72)
	var b strings.Builder
	b.WriteString(m.St.Title.Render(termtext.Line(d.Title)))
	for _, line := range d.Body {
		b.WriteString("\n" + m.R.NewStyle().Width(width-4).Render(termtext.Line(line)))
	}
	if len(d.Choices) > 0 {
		b.WriteString("\n\n")
		for i, c := range d.Choices {
			label := " " + string(c) + " "
			if i == d.choice {
				label = "[" + string(c) + "]"
				if !m.Plain {
					label = m.St.Selected.Render(label)
				}
			}
			b.WriteString(label + "  ")
		}
	}
	if d.Input != nil {
		b.WriteString("\n\n" + d.Input.View())
	}
	if d.problem != "" {
		p := "✗ " + termtext.Line(d.problem)
		if !m.Plain {
			p = m.St.Bad.Render(p)
		}
		b.WriteString("\n" + p)
	}
	keys := "enter " + d.Verb + " · esc cancel"
	if d.Do == nil {
		keys = "esc close"
	}
	if len(d.Choices) > 1 {
		keys = "tab choose · " + keys
	}
	b.WriteString("\n\n" + m.St.Help.Render(keys))
	box := m.St.Dialog.Width(width).Render(b.String())
	return strings.Split(m.R.Place(w, h, lipgloss.Center, lipgloss.Center, box), "\n")
}

// planExists reports whether the latest scan saw a plan at rel.
func (m *Model) planExists(rel string) bool { return m.d.Has(rel) }

// ask opens a dialog about rel whose action is only taken if rel's lease is
// still the one the operator saw: a worker that claims or recovers the plan
// while the dialog is open must not lose it to a stale confirmation.
func (m *Model) ask(d *dialog, rel string, lease *model.Lease) {
	d.rel, d.seen, d.existed = rel, leasePrint(lease), m.planExists(rel)
	if m.feed.claims() != nil {
		// No lease file to look at again: the backend's compare-and-swap
		// on the lease the operator saw refuses one that changed, and
		// each scan closes a dialog whose plan changed (dropStaleDialog).
		m.stack.push(d)
		return
	}
	t, seen, existed, do := m.Opt.Tree, d.seen, d.existed, d.Do
	d.Do = func(to model.Lane, text string) tea.Cmd {
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
				return uictx.ActionMsg{Err: fmt.Errorf("%s changed while you decided (%s); nothing done, look again", kit.SlugOf(rel), changedWords(rel, cur, now))}
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
	hits, err := t.FindSlug(kit.SlugOf(rel), model.Lanes...)
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
