package ui

import (
	"errors"
	"fmt"
	"strconv"
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
	r := m.candidate()
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
	approve := func(model.Lane, string) tea.Cmd {
		return actionCmd("approve", func() (string, error) {
			if err := stillAt(project, slug, commit, false); err != nil {
				return "", err
			}
			a, err := landing.Approve(t, slug, agent)
			return "approved " + slug + " at " + short(a.Commit) + "; + queues it", err
		})
	}
	do := approve
	if v := r.ScopeViolations; len(v) > 0 {
		body = append(body, "⚠ it touches "+countPaths(len(v))+" outside its plan's scope: "+listPaths(v)+".")
		do = func(model.Lane, string) tea.Cmd {
			return func() tea.Msg { return askMsg{againApprove(slug, commit, v, approve)} }
		}
	}
	m.stack.push(&dialog{title: "Approve " + slug + " @ " + short(commit), body: body, verb: "approve", do: do})
}

// askMsg puts a question on screen once the one before it is answered.
type askMsg struct{ d *dialog }

// againApprove asks once more before approving a change that touches
// paths outside its scope, naming them.
func againApprove(slug, commit string, paths []string, approve func(model.Lane, string) tea.Cmd) *dialog {
	body := []string{slug + " @ " + short(commit) + " touches " + countPaths(len(paths)) + " its plan's scope does not allow:"}
	for _, p := range paths[:min(len(paths), 8)] {
		body = append(body, "  "+p)
	}
	if len(paths) > 8 {
		body = append(body, "  and "+itoa(len(paths)-8)+" more")
	}
	body = append(body, "Approve it anyway? (esc leaves it unapproved; X sends it back with a note.)")
	return &dialog{title: "Out of scope: " + slug, body: body, verb: "approve anyway", do: approve}
}

// listPaths names the first few paths, and how many more there are.
func listPaths(paths []string) string {
	const shown = 3
	s := strings.Join(paths[:min(shown, len(paths))], ", ")
	if len(paths) > shown {
		s += " and " + itoa(len(paths)-shown) + " more"
	}
	return s
}

func orWords(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (m *Model) askNeedsWork() tea.Cmd {
	r := m.candidate()
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
	r := m.candidate()
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
	self, t, slug, commit := m.opt.Self, m.opt.Tree, h.Slug, h.Commit
	body := []string{"Land the queue's head, " + slug + ": the frozen commit " + short(commit) + " on " + h.Branch +
		", merged onto " + l.Integration + " @ " + short(l.Tip) + "; " + l.Integration + " moves only if nothing landed meanwhile."}
	if h.Candidate != "" {
		body = append(body, "Candidate "+short(h.Candidate)+" (tree "+short(h.Tree)+").")
	}
	body = append(body, "Now: "+string(h.State)+orEmpty(" — ", m.whyOf(h))+".")
	switch h.State {
	case landing.Conflict, landing.Stale, landing.Failed, landing.NeedsReview, landing.Reviewed, landing.Approved, landing.NoChange, landing.Landed:
		// The lander would refuse: say so, and offer no landing.
		body = append(body, "⚠ it cannot land as it stands: X sends it back to its worker with a note, - takes it out of the queue.")
		m.stack.push(&dialog{title: "Cannot land " + slug + " @ " + short(commit), body: body})
		return
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
			return landCmd(t, self, slug, commit, to == landUngated)
		},
	})
}

// landCmd starts `fleetwatch queue land --yes` detached and says so; its
// end comes back as a landDoneMsg, so a refusal reaches the screen.
func landCmd(t *planfs.Tree, self, slug, commit string, ungated bool) tea.Cmd {
	return func() tea.Msg {
		project := t.Project
		if err := stillAt(project, slug, commit, true); err != nil {
			return actionMsg{err: fmt.Errorf("land: %w", err)}
		}
		args := []string{"queue", "land", "--yes", "--root", project}
		if ungated {
			args = append(args, "--ungated")
		}
		log, done, err := workers.StartDetachedWatched(t, self, "land.log", args...)
		if err != nil {
			return actionMsg{err: fmt.Errorf("land: %w", err)}
		}
		started := actionMsg{done: "landing " + slug + " @ " + short(commit) + " started (log: " + relTo(project, log) + ")"}
		return tea.BatchMsg{
			func() tea.Msg { return started },
			func() tea.Msg { return landDoneMsg{slug: slug, commit: commit, log: log, err: <-done} },
		}
	}
}

// landDoneMsg is how a landing started here ended: err is the lander's
// exit, and the last line of its log says what happened.
type landDoneMsg struct {
	slug, commit, log string
	err               error
}

// landDone puts a landing's end on the status line; a refusal or failure
// is also a notice, naming the lander's reason.
func (m *Model) landDone(msg landDoneMsg) tea.Cmd {
	last := ""
	if lines, _ := workers.LogTail(msg.log, 1); len(lines) > 0 {
		last = strings.TrimPrefix(strings.TrimSpace(lines[0]), "fleetwatch: ")
	}
	reload := tea.Batch(m.requestLoad(), m.mergeIfShown())
	if msg.err == nil {
		m.setStatus("✓ "+orWords(last, "landed "+msg.slug+" @ "+short(msg.commit)), false)
		return reload
	}
	why := "landing " + msg.slug + " @ " + short(msg.commit) + " did not land: " + orWords(last, msg.err.Error())
	m.setStatus("✗ "+why, true)
	m.notes.add([]model.Notice{{ID: "landing:" + msg.slug + "@" + msg.commit + "@" + strconv.FormatFloat(m.now, 'f', 3, 64),
		At: m.now, Kind: model.NoticeLanding, Text: why, Subject: model.SubjectGate}})
	return tea.Batch(reload, m.bellCmd())
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
	if w := m.whyOf(s); w != "" {
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
	if v := s.ScopeViolations; len(v) > 0 {
		out = append(out, "", m.st.Title.Render(line("⚠ Out of scope: "+countPaths(len(v))+" its plan's scope does not allow")))
		for _, p := range v {
			out = append(out, "  "+line(p))
		}
	}
	out = append(out, "", m.st.Title.Render("Checks")+"  "+m.st.Dim.Render(strings.TrimPrefix(checkLegend, "checks: ")))
	if len(s.Checks) == 0 {
		out = append(out, "  "+line(orWords(m.whyOf(s), "no checks configured")))
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
