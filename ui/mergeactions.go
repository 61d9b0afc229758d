package ui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"fleetwatch/internal/termtext"
	"fleetwatch/landing"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// The Merge pane's verbs. Each runs off the UI goroutine on copies; the
// ones a person confirms first read the queue again and refuse when the
// commit they were shown is no longer the one they would act on.

// stillAt refuses when slug's branch tip is no longer commit (or slug is
// no longer a candidate), and when head, the queue's first entry is not.
func stillAt(project, slug, commit string, head bool) error {
	l, err := landing.List(project)
	if err != nil {
		return err
	}
	for _, s := range l.Items {
		if s.Slug != slug {
			continue
		}
		switch {
		case s.Commit != commit:
			return fmt.Errorf("%s moved to %s while you decided (you saw %s); nothing done, look again", slug, short(s.Commit), short(commit))
		case head && (s.Position == nil || *s.Position != 1):
			return fmt.Errorf("%s is no longer the queue's head; nothing done, look again", slug)
		}
		return nil
	}
	return fmt.Errorf("%s is no longer a candidate; nothing done", slug)
}

func (m *Model) askApprove() {
	r := m.merge.row()
	if r == nil {
		return
	}
	t, project, agent, slug, commit := m.opt.Tree, m.opt.Tree.Project, m.opt.Agent, r.Slug, r.Commit
	body := []string{"Approve " + slug + " at " + short(commit) + " (" + r.Branch + ") as " + agent +
		": only a person's approve lets a change join the queue and land."}
	if r.State == landing.Stale {
		body = append(body, "⚠ stale: "+orWords(r.Why, "the branch moved after its review or checks")+"; you approve the tip "+short(commit)+".")
	}
	if r.Approval != nil && r.Approval.Stale {
		body = append(body, "⚠ the approve by "+r.Approval.By+" of "+short(r.Approval.Commit)+" is stale: the branch moved since.")
	}
	switch {
	case len(r.Reviews) == 0:
		body = append(body, "No peer review yet (v asks another worker for one).")
	case r.Reviews[0].Stale:
		rv := r.Reviews[0]
		body = append(body, "⚠ the newest peer review ("+rv.Verdict+" by "+rv.Reviewer+") is of "+short(rv.Commit)+", not the tip: stale.")
	default:
		rv := r.Reviews[0]
		body = append(body, "Peer review: "+rv.Verdict+" by "+rv.Reviewer+" at "+short(rv.Commit)+".")
	}
	m.stack.push(&dialog{
		title: "Approve " + slug + " @ " + short(commit), body: body, verb: "approve",
		do: func(model.Lane, string) tea.Cmd {
			return actionCmd("approve", func() (string, error) {
				if err := stillAt(project, slug, commit, false); err != nil {
					return "", err
				}
				a, err := landing.Approve(t, slug, agent)
				return "approved " + slug + " at " + short(a.Commit), err
			})
		},
	})
}

func orWords(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (m *Model) askNeedsWork() tea.Cmd {
	r := m.merge.row()
	if r == nil {
		return nil
	}
	in := m.textField()
	in.Placeholder = "what needs doing (goes under ## Review notes)"
	in.CharLimit = 2000
	in.Width = 50
	cmd := in.Focus()
	t, project, agent := m.opt.Tree, m.opt.Tree.Project, m.opt.Agent
	slug, commit, rel, queued := r.Slug, r.Commit, r.Rel, r.Position != nil
	body := []string{"Send " + slug + " back to its worker's lane with your note under ## Review notes; its branch " + r.Branch + " stays, and the next owner gets it."}
	if queued {
		body = append(body, "It leaves the queue (place "+itoa(*r.Position)+") and any approve is void.")
	}
	m.stack.push(&dialog{
		title: "Needs work: " + slug, body: body, verb: "send back", input: &in,
		do: func(_ model.Lane, note string) tea.Cmd {
			if note == "" {
				return func() tea.Msg {
					return actionMsg{err: errors.New("needs work: say what needs doing; nothing sent back")}
				}
			}
			return actionCmd("needs work", func() (string, error) {
				if err := stillAt(project, slug, commit, false); err != nil {
					return "", err
				}
				dst, err := t.SendBack(rel, note, planfs.Actor{AgentID: agent})
				if err != nil {
					return "", err
				}
				done := "sent " + slug + " back → " + laneOf(dst)
				if queued {
					if err := landing.Remove(t, slug); err != nil {
						return "", fmt.Errorf("%s, but it is still queued: %w", done, err)
					}
				}
				return done, nil
			})
		},
	})
	return cmd
}

// startPeer starts `fleetwatch review SLUG --peer` detached; its verdict
// shows in the pane when it is stored.
func (m *Model) startPeer() tea.Cmd {
	r := m.merge.row()
	if r == nil || m.opt.Self == "" {
		return nil
	}
	self, t, project, slug := m.opt.Self, m.opt.Tree, m.opt.Tree.Project, r.Slug
	return actionCmd("peer review", func() (string, error) {
		log, err := workers.StartDetachedAs(t, self, "review-"+slug+".log", "review", slug, "--peer", "--root", project)
		return "peer review of " + slug + " started (log: " + relTo(project, log) + ")", err
	})
}

func (m *Model) queueAdd() tea.Cmd {
	r := m.merge.row()
	if r == nil {
		return nil
	}
	t, slug := m.opt.Tree, r.Slug
	return actionCmd("queue add", func() (string, error) {
		return "queued " + slug, landing.Add(t, slug)
	})
}

func (m *Model) queueRemove() tea.Cmd {
	r := m.merge.row()
	if r == nil {
		return nil
	}
	t, slug := m.opt.Tree, r.Slug
	return actionCmd("queue remove", func() (string, error) {
		return "took " + slug + " out of the queue", landing.Remove(t, slug)
	})
}

// The land dialog's choices when nothing gates a landing: waiting is the
// default; only choosing ungated lands.
const (
	landWait    model.Lane = "wait"
	landUngated model.Lane = "ungated"
)

// askLand names the head, the exact commit that would land and what gates
// it, then starts `fleetwatch queue land --yes` detached.
func (m *Model) askLand() {
	h := m.merge.head()
	if h == nil || m.opt.Self == "" {
		return
	}
	l := &m.merge.listing
	self, t, project, slug, commit := m.opt.Self, m.opt.Tree, m.opt.Tree.Project, h.Slug, h.Commit
	body := []string{"Land the queue's head, " + slug + ": the frozen commit " + short(commit) + " on " + h.Branch +
		", merged onto " + l.Integration + " @ " + short(l.Tip) + "; " + l.Integration + " moves only if nothing landed meanwhile."}
	if h.Candidate != "" {
		body = append(body, "Candidate "+short(h.Candidate)+" (tree "+short(h.Tree)+").")
	}
	body = append(body, "Now: "+string(h.State)+orEmpty(" — ", whyText(h))+".")
	switch h.State {
	case landing.Conflict, landing.Stale, landing.Failed, landing.NeedsReview, landing.Reviewed:
		// The lander would refuse; say so before it runs, and what helps.
		body = append(body, "⚠ as it stands it will not land: X sends it back to its worker with a note, - takes it out of the queue.")
	}
	ungated := h.Ungated || len(l.CheckNames) == 0
	var choices []model.Lane
	if ungated {
		body = append(body, "⚠ ungated: no checks in fleetwatch.yaml, so nothing verifies this change. Choose ungated to land it anyway.")
		choices = []model.Lane{landWait, landUngated}
	} else {
		body = append(body, "Checks: "+strings.Join(l.CheckNames, ", ")+" run on the candidate unless they passed on this exact tree; it lands only if every one passes.")
	}
	body = append(body, "Runs detached: fleetwatch queue land --yes; progress in "+workers.LogDir+"/land.log.")
	m.stack.push(&dialog{
		title: "Land " + slug + " @ " + short(commit), body: body, verb: "land", choices: choices,
		do: func(to model.Lane, _ string) tea.Cmd {
			if ungated && to != landUngated {
				return func() tea.Msg {
					return actionMsg{err: errors.New("land: nothing landed; " + slug + " is ungated, and only choosing ungated lands it")}
				}
			}
			return actionCmd("land", func() (string, error) {
				if err := stillAt(project, slug, commit, true); err != nil {
					return "", err
				}
				args := []string{"queue", "land", "--yes", "--root", project}
				if to == landUngated {
					args = append(args, "--ungated")
				}
				log, err := workers.StartDetachedAs(t, self, "land.log", args...)
				return "landing " + slug + " @ " + short(commit) + " started (log: " + relTo(project, log) + ")", err
			})
		},
	})
}

func orEmpty(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

// relTo is path from project's root, as the operator would type it.
func relTo(project, path string) string {
	return strings.TrimPrefix(path, project+"/")
}

// diffMerge is `d` in the Merge pane: the candidate's feature branch.
func (m *Model) diffMerge() tea.Cmd {
	r := m.merge.row()
	if r == nil {
		return nil
	}
	project, slug := m.opt.Tree.Project, r.Slug
	return m.openDiff("plan "+termtext.Line(slug), "plan\x00"+slug, func() (workers.Diff, error) {
		return workers.DiffOfPlan(project, slug)
	})
}

// mergeDetailLines is how many lines of each check's log the detail shows.
const mergeDetailLines = 15

// openMerge is enter in the Merge pane: the candidate's facts, each
// check with its log's tail, and the peer reviews, newest first.
func (m *Model) openMerge() tea.Cmd {
	r := m.merge.row()
	if r == nil {
		return nil
	}
	t, s := m.opt.Tree, *r
	return m.openDetail("merge\x00"+s.Slug, s.Slug+" · "+string(s.State), func() func(m *Model) []string {
		logs := make([][]string, len(s.Checks))
		logErrs := make([]error, len(s.Checks))
		for i, c := range s.Checks {
			if c.Log != "" {
				logs[i], logErrs[i] = workers.LogTail(c.Log, mergeDetailLines)
			}
		}
		texts := make([]string, len(s.Reviews))
		textErrs := make([]error, len(s.Reviews))
		for i, rv := range s.Reviews {
			texts[i], _, textErrs[i] = t.ReadReviewText(rv.Path)
		}
		return func(m *Model) []string {
			return m.mergeDetail(&s, logs, logErrs, texts, textErrs)
		}
	})
}

func (m *Model) mergeDetail(s *landing.Status, logs [][]string, logErrs []error, texts []string, textErrs []error) []string {
	line := termtext.Line
	out := []string{
		line(s.Branch + " @ " + short(s.Commit) + " · " + aheadBehind(s) + " against base " + short(s.Base)),
	}
	if w := whyText(s); w != "" {
		out = append(out, line("why: "+w))
	}
	if s.Author != "" {
		out = append(out, line("author: "+s.Author))
	}
	switch {
	case s.ApprovedBy != "" && s.Approval != nil:
		out = append(out, line("approved by "+s.ApprovedBy+" at "+short(s.Approval.Commit)+", "+s.Approval.At.Format(time.DateTime)))
	case s.ApprovedBy != "":
		out = append(out, line("approved by "+s.ApprovedBy))
	case s.Approval != nil:
		out = append(out, line("approve by "+s.Approval.By+" of "+short(s.Approval.Commit)+" is stale: the branch moved since"))
	case m.opt.ReadOnly:
		out = append(out, "not approved") // a viewer's screen names no action
	default:
		out = append(out, "not approved (A approves)")
	}
	if s.Candidate != "" {
		out = append(out, line("candidate "+short(s.Candidate)+" · tree "+short(s.Tree)))
	}
	out = append(out, "", m.st.Title.Render("Checks")+"  "+m.st.Dim.Render(strings.TrimPrefix(checkLegend, "checks: ")))
	if len(s.Checks) == 0 {
		out = append(out, "  "+line(orWords(whyText(s), "no checks configured")))
	}
	for i, c := range s.Checks {
		facts := checkGlyph(c.Result) + " " + c.Name + " " + string(c.Result)
		if c.Log != "" {
			facts += " · exit " + itoa(c.Exit) + " · " + c.Took.Round(time.Millisecond).String() + " · " + relTo(m.opt.Tree.Project, c.Log)
		}
		if c.Note != "" {
			facts += " · " + c.Note
		}
		out = append(out, line(facts))
		if logErrs[i] != nil {
			out = append(out, "    "+line("log: "+logErrs[i].Error()))
		}
		for _, l := range logs[i] {
			out = append(out, "    "+m.st.Dim.Render(line(l)))
		}
	}
	out = append(out, "", m.st.Title.Render("Peer reviews, newest first"))
	if len(s.Reviews) == 0 {
		out = append(out, "  none yet (v asks another worker for one)")
	}
	for i, rv := range s.Reviews {
		head := rv.Verdict + " by " + rv.Reviewer + " at " + short(rv.Commit) + ", " + rv.At.Format(time.DateTime)
		if rv.Stale {
			head += " · stale: the branch moved since"
		}
		out = append(out, "", m.st.Bold.Render(line(head)))
		if textErrs[i] != nil {
			out = append(out, "  "+line(textErrs[i].Error()))
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(texts[i], "\n"), "\n") {
			out = append(out, line(l))
		}
	}
	return out
}
