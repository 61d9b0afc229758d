package ui

import (
	"os"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// Editing hands the terminal to the operator's editor: the engine copies
// the plan out and builds the command, tea.ExecProcess suspends the UI
// while it runs, and the engine writes the copy back.

// editReadyMsg is a plan ready for the editor, or why it is not: the
// plan (just created, or the selected one), its copy and the editor.
type editReadyMsg struct {
	rel     string
	created bool
	words   []string // the editor command; nil with noEditor
	copy    *planfs.EditCopy
	// err is why the plan could not be created or copied; noEditor why
	// no editor runs (the plan is written all the same).
	err, noEditor error
}

// editedMsg is the editor's exit.
type editedMsg struct {
	ready editReadyMsg
	err   error
}

// createPlanCmd has the engine write the new plan, then readies it for the
// editor.
func createPlanCmd(t *planfs.Tree, n model.NewPlan, agent string) tea.Cmd {
	return func() tea.Msg {
		rel, err := t.CreatePlan(n, agent)
		if err != nil {
			return editReadyMsg{created: true, err: err}
		}
		msg := readyEdit(t, rel)
		msg.created = true
		return msg
	}
}

// editPlanCmd readies the plan at rel for the editor.
func editPlanCmd(t *planfs.Tree, rel string) tea.Cmd {
	return func() tea.Msg { return readyEdit(t, rel) }
}

func readyEdit(t *planfs.Tree, rel string) editReadyMsg {
	msg := editReadyMsg{rel: rel}
	msg.words, msg.noEditor = proc.Editor(os.Getenv)
	if msg.noEditor != nil {
		return msg
	}
	msg.copy, msg.err = t.CopyForEdit(rel)
	return msg
}

// updateEdit takes the new-plan form's and the editor's messages.
func (m *Model) updateEdit(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case newPlanOfferMsg:
		return m.openNewPlan(msg), true
	case editReadyMsg:
		return m.editReady(msg), true
	case editedMsg:
		return m.edited(msg), true
	}
	return nil, false
}

func (m *Model) editReady(msg editReadyMsg) tea.Cmd {
	f, _ := find[*newPlanForm](m.stack)
	if msg.created && msg.err != nil {
		if f != nil {
			f.busy, f.err = false, termtext.Line(msg.err.Error())
			return nil
		}
		m.setStatus("✗ new plan: "+msg.err.Error(), true)
		return nil
	}
	if f != nil && msg.created {
		m.stack.remove(f)
	}
	if msg.created {
		m.showLane(model.Rel(msg.rel).Lane())
		plansOf(m).Want(msg.rel)
	}
	what := "edit " + kit.SlugOf(msg.rel)
	if msg.created {
		what = "created " + msg.rel
	}
	switch {
	case msg.noEditor != nil:
		if msg.created {
			m.setStatus("✓ "+what+"; not opened: "+msg.noEditor.Error(), false)
		} else {
			m.setStatus("✗ "+what+": "+msg.noEditor.Error(), true)
		}
		return m.requestLoad()
	case msg.err != nil:
		m.setStatus("✗ "+what+": "+msg.err.Error(), true)
		return m.requestLoad()
	}
	m.setStatus("editing "+kit.SlugOf(msg.rel)+" in "+msg.words[0]+"…", false)
	return tea.ExecProcess(proc.EditorCmd(msg.words, msg.copy.Path), func(err error) tea.Msg {
		return editedMsg{ready: msg, err: err}
	})
}

// edited writes the copy back once the editor exits, off the UI goroutine.
func (m *Model) edited(msg editedMsg) tea.Cmd {
	r := msg.ready
	if msg.err != nil {
		m.setStatus("✗ editor "+r.words[0]+": "+msg.err.Error()+"; the plan is as it was, your copy is in "+r.copy.Path, true)
		return m.requestLoad()
	}
	t, agent := m.Opt.Tree, m.Opt.Agent
	return uictx.Action("edit", func() (string, error) {
		changed, err := t.WriteBack(r.copy, agent)
		switch {
		case err != nil:
			return "", err
		case r.created:
			return "created " + r.rel, nil
		case !changed:
			return kit.SlugOf(r.rel) + " unchanged", nil
		}
		return "edited " + kit.SlugOf(r.rel), nil
	})
}

// askEdit opens the selected plan in the editor; a plan another agent
// holds asks first, since its agent may be changing it.
func (m *Model) askEdit() tea.Cmd {
	rel, row, lease := m.target()
	if row == nil {
		return nil
	}
	t := m.Opt.Tree
	rel = kit.FileRel(rel, lease)
	if lease == nil || lease.Corrupt != "" || !lease.Active(m.Now) || lease.AgentID == m.Opt.Agent {
		return editPlanCmd(t, rel)
	}
	who := termtext.Line(lease.AgentID)
	m.stack.push(&dialog{Question: uictx.Question{
		Title: "Edit " + kit.SlugOf(rel) + ", which " + who + " holds",
		Body: []string{who + " holds this plan (" + kit.TimeLeft(lease, m.Now) + ") and may be changing it. " +
			"You edit a copy; it is written back only if the plan has not moved or changed meanwhile."},
		Verb: "edit",
		Do:   func(model.Lane, string) tea.Cmd { return editPlanCmd(t, rel) },
	}, rel: rel, seen: leasePrint(lease), existed: true})
	return nil
}

// showLane switches the Plans pane to lane, where a new plan shows once the
// next scan sees it.
func (m *Model) showLane(lane model.Lane) {
	if !plansOf(m).ShowLane(lane) {
		return
	}
	plansOf(m).Rebuild(m.ctx())
	m.syncKeys()
}
