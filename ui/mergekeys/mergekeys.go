// Package mergekeys holds the merge keys on a candidate (A approves, X
// sends back, + queues, m lands the head), which two panes offer: the
// Merge pane on its selected row, and the Plans pane on the selected
// plan's own candidate in review-needed/. Both read the listing the root
// holds (uictx.Ctx.Merge) and reach each other never: this package is
// what they share, with the words both draw (a state's reason, a batch).
package mergekeys

import (
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// Where is where the merge keys are pressed.
type Where int

const (
	// Away: neither the Merge pane nor the Plans pane is shown.
	Away Where = iota
	// InMerge: the Merge pane, on its selected row.
	InMerge
	// InPlans: the Plans pane, on the selected plan's own candidate.
	InPlans
)

// queue is the listing the keys act in, where they are pressed, and the
// Merge pane's selected row.
type queue struct {
	*uictx.Merge
	where Where
	row   *landing.Status
}

// Keys enables A, X, + and m for the candidate where they are pressed:
// row in the Merge pane, the selected plan's in the Plans pane.
func Keys(pc *uictx.Ctx, set uictx.SetKey, where Where, row *landing.Status) {
	(&queue{pc.Merge, where, row}).candidateKeys(pc, set)
}

// Key answers A, X, + and m on the candidate where they are pressed.
func Key(pc *uictx.Ctx, msg tea.KeyMsg, where Where, row *landing.Status) (tea.Msg, bool) {
	return (&queue{pc.Merge, where, row}).candidateKey(pc, msg)
}

// Head is the queue's first entry, nil when the queue is empty.
func Head(ls *landing.Listing) *landing.Status {
	for i := range ls.Items {
		if p := ls.Items[i].Position; p != nil && *p == 1 {
			return &ls.Items[i]
		}
	}
	return nil
}

// FlakyGlyph marks a check that passed only when run again.
const FlakyGlyph = "≈"

// ApprovedTip reports whether a person's approve stands for r's tip.
func ApprovedTip(r *landing.Status) bool {
	return r != nil && r.ApprovedBy != "" && (r.Approval == nil || !r.Approval.Stale)
}

func approveWhy(r *landing.Status) string {
	switch {
	case ApprovedTip(r):
		return "approve: " + termtext.Line(r.Slug) + " is approved at its tip already (by " + termtext.Line(r.ApprovedBy) + ")"
	case r.State == landing.NoChange:
		return "approve: " + termtext.Line(r.Slug) + " has no commit the integration branch lacks: nothing to approve (X sends it back)"
	case r.State == landing.Landed:
		return "approve: " + termtext.Line(r.Slug) + " has landed"
	}
	return "approve: " + termtext.Line(r.Slug) + " has no branch to approve"
}

func addWhy(r *landing.Status) string {
	switch {
	case r.State == landing.NoChange:
		return "add: " + termtext.Line(r.Slug) + " has no commit the integration branch lacks: nothing to queue"
	case r.Position != nil:
		return "add: " + termtext.Line(r.Slug) + " is in the queue already, at " + kit.Itoa(*r.Position)
	case r.Approval != nil && r.Approval.Stale:
		return "add: " + termtext.Line(r.Slug) + "'s approval is stale (the branch moved); approve it again (A)"
	}
	return "add: only approved candidates join the queue; approve " + termtext.Line(r.Slug) + " first (A)"
}

// BatchLine is the next batch in one line: who rides together, its
// checks, and the bisection of a failed one.
func BatchLine(b *landing.BatchView) string {
	var g strings.Builder
	for _, c := range b.Checks {
		g.WriteString(ResultGlyph(c))
	}
	line := "batch of " + kit.Itoa(len(b.Slugs)) + ": " + strings.Join(b.Slugs, ", ") + " · " + g.String()
	if b.Retried {
		line += " · retried"
	}
	if bi := b.Bisection; bi != nil {
		line += " · bisecting: " + kit.Itoa(bi.Passing) + " pass, " + kit.Itoa(bi.Failing) + " fail"
		if bi.Culprit != "" {
			line += ", culprit " + bi.Culprit
		}
	}
	return line
}

// checkGlyph is one check's result as one cell; each result has its own
// shape, so no colour is needed.
func checkGlyph(r landing.Result) string {
	switch r {
	case landing.Pass:
		return "✓"
	case landing.Fail:
		return "✗"
	case landing.Error:
		return "!"
	case landing.Timeout:
		return "◷"
	case landing.Running:
		return "…"
	}
	return "·"
}

// ResultGlyph is c's glyph, a flaky pass apart from a pass.
func ResultGlyph(c landing.CheckResult) string {
	if c.Result == landing.Pass && c.Flaky {
		return FlakyGlyph
	}
	return checkGlyph(c.Result)
}

// CountPaths is "1 path", "3 paths".
func CountPaths(n int) string {
	if n == 1 {
		return "1 path"
	}
	return kit.Itoa(n) + " paths"
}

// WhyOf is the state's reason in the engine's words, with the
// conflicting paths when the reason does not name them.
func WhyOf(cm *uictx.Common, s *landing.Status) string {
	why := s.Why
	if s.State == landing.Approved && s.ApprovedBy != "" {
		// The engine names the CLI's verb; here the key does it, and a
		// viewer's screen names no action.
		why = "approved by " + s.ApprovedBy + "; + queues it"
		if cm.Opt.ReadOnly {
			why = "approved by " + s.ApprovedBy + "; not queued yet"
		}
	}
	if len(s.ConflictPaths) > 0 && !strings.Contains(why, s.ConflictPaths[0]) {
		paths := "conflict in " + strings.Join(s.ConflictPaths, ", ")
		if why == "" {
			why = paths
		} else {
			why += ": " + paths
		}
	}
	if why == "" && s.Ungated {
		why = "ungated: no checks configured — land with --ungated"
	}
	return why
}

// The merge keys A, X, + and m act on what is selected where they are
// pressed: the Merge pane's row, or in the Plans pane the selected plan's
// own candidate. Anywhere else, or without a candidate, they are off and
// say why; never do they act on a row the operator cannot see.

// candidate is the candidate the merge keys act on here, nil when none.
func (l *queue) candidate(pc *uictx.Ctx) *landing.Status {
	switch l.where {
	case InMerge:
		return l.row
	case InPlans:
		// Its own: the candidate of the plan where it is, in review-needed/.
		if sel := pc.Target; sel.Row != nil {
			if r := l.bySlug(sel.Row.Plan.Slug); r != nil && r.Rel == sel.Row.Plan.Rel {
				return r
			}
		}
	}
	return nil
}

// bySlug is slug's candidate in the last listing, nil when it has none.
func (l *queue) bySlug(slug string) *landing.Status {
	for i := range l.Listing.Items {
		if l.Listing.Items[i].Slug == slug {
			return &l.Listing.Items[i]
		}
	}
	return nil
}

// noCandidate is why verb has nothing to act on here.
func (l *queue) noCandidate(pc *uictx.Ctx, verb string) string {
	if l.where != InPlans {
		return verb + ": select a candidate in the merge pane (6)"
	}
	sel := pc.Target
	switch {
	case sel.Row == nil:
		return verb + ": select a plan in review-needed/ (or a candidate in the merge pane, 6)"
	case !l.Loaded:
		return verb + ": the merge queue is not read yet; 6 shows it"
	}
	return verb + ": " + termtext.Line(sel.Row.Plan.Slug) + " is not a merge candidate: only plans in review-needed/ are"
}

// candidateKeys sets A, X, + and m for the candidate here; the Plans
// pane sets them too, for the selected plan's candidate.
func (l *queue) candidateKeys(pc *uictx.Ctx, set uictx.SetKey) {
	k := &pc.Keys.Merge
	r := l.candidate(pc)
	if r == nil {
		for _, b := range []struct {
			b    *key.Binding
			verb string
		}{{&k.Approve, "approve"}, {&k.NeedsWork, "needs work"}, {&k.Add, "add"}} {
			set(b.b, false, l.noCandidate(pc, b.verb))
		}
		l.landKey(pc, set, nil)
		return
	}
	open := r.State != landing.Landed && r.Commit != ""
	live := open && r.State != landing.NoChange
	set(&k.Approve, live && !ApprovedTip(r), approveWhy(r))
	set(&k.NeedsWork, open && r.Rel != "", needsWorkWhy(r))
	set(&k.Add, live && r.Position == nil && ApprovedTip(r), addWhy(r))
	l.landKey(pc, set, r)
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
func (l *queue) landKey(pc *uictx.Ctx, set uictx.SetKey, r *landing.Status) {
	k := &pc.Keys.Merge
	h := Head(&l.Listing)
	switch {
	case pc.Opt.Self == "":
		set(&k.Land, false, "land: this UI does not know its own binary, so it cannot start the lander")
	case l.where == InMerge:
		set(&k.Land, h != nil, "land: the queue is empty (+ adds an approved candidate)")
	case l.where != InPlans:
		set(&k.Land, false, "land: switch to the merge pane (6)")
	case r == nil:
		set(&k.Land, false, l.noCandidate(pc, "land"))
	case r.Position == nil:
		set(&k.Land, false, "land: "+termtext.Line(r.Slug)+" is not queued; only the queue's head lands")
	default:
		set(&k.Land, h == r, "land: "+termtext.Line(r.Slug)+" is at place "+kit.Itoa(*r.Position)+"; only the queue's head lands")
	}
}

// candidateKey answers A, X, + and m on the candidate here: the Merge
// pane's row, or in the Plans pane the selected plan's.
func (l *queue) candidateKey(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	k := &pc.Keys.Merge
	switch {
	case key.Matches(msg, k.Approve):
		return l.askApprove(pc), true
	case key.Matches(msg, k.NeedsWork):
		return l.askNeedsWork(pc), true
	case key.Matches(msg, k.Add):
		return l.queueAdd(pc), true
	case key.Matches(msg, k.Land):
		return l.askLand(pc), true
	}
	return nil, false
}

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
			return fmt.Errorf("%s moved to %s while you decided (you saw %s); nothing done, look again", slug, kit.Short(s.Commit), kit.Short(commit))
		case head && (s.Position == nil || *s.Position != 1):
			return fmt.Errorf("%s is no longer the queue's head; nothing done, look again", slug)
		}
		return nil
	}
	return fmt.Errorf("%s is no longer a candidate; nothing done", slug)
}

func (l *queue) askApprove(pc *uictx.Ctx) tea.Msg {
	r := l.candidate(pc)
	if r == nil {
		return nil
	}
	t, project, agent, slug, commit := pc.Opt.Tree, pc.Opt.Tree.Project, pc.Opt.Agent, r.Slug, r.Commit
	body := []string{"Approve " + slug + " at " + kit.Short(commit) + " (" + r.Branch + ") as " + agent +
		": only a person's approve lets a change join the queue and land."}
	if r.State == landing.Stale {
		body = append(body, "⚠ stale: "+OrWords(r.Why, "the branch moved after its review or checks")+"; you approve the tip "+kit.Short(commit)+".")
	}
	if r.Approval != nil && r.Approval.Stale {
		body = append(body, "⚠ the approve by "+r.Approval.By+" of "+kit.Short(r.Approval.Commit)+" is stale: the branch moved since.")
	}
	switch {
	case len(r.Reviews) == 0:
		body = append(body, "No peer review yet (v asks another worker for one).")
	case r.Reviews[0].Stale:
		rv := r.Reviews[0]
		body = append(body, "⚠ the newest peer review ("+rv.Verdict+" by "+rv.Reviewer+") is of "+kit.Short(rv.Commit)+", not the tip: stale.")
	default:
		rv := r.Reviews[0]
		body = append(body, "Peer review: "+rv.Verdict+" by "+rv.Reviewer+" at "+kit.Short(rv.Commit)+".")
	}
	approve := func(model.Lane, string) tea.Cmd {
		return uictx.Action("approve", func() (string, error) {
			if err := stillAt(project, slug, commit, false); err != nil {
				return "", err
			}
			a, err := landing.Approve(t, slug, agent)
			return "approved " + slug + " at " + kit.Short(a.Commit) + "; + queues it", err
		})
	}
	do := approve
	if v := r.ScopeViolations; len(v) > 0 {
		body = append(body, "⚠ it touches "+CountPaths(len(v))+" outside its plan's scope: "+listPaths(v)+".")
		do = func(model.Lane, string) tea.Cmd {
			return func() tea.Msg { return againApprove(slug, commit, v, approve) }
		}
	}
	return uictx.QuestionReq{Q: uictx.Question{Title: "Approve " + slug + " @ " + kit.Short(commit), Body: body, Verb: "approve", Do: do}}
}

// againApprove asks once more before approving a change that touches
// paths outside its scope, naming them.
func againApprove(slug, commit string, paths []string, approve func(model.Lane, string) tea.Cmd) uictx.QuestionReq {
	body := []string{slug + " @ " + kit.Short(commit) + " touches " + CountPaths(len(paths)) + " its plan's scope does not allow:"}
	for _, p := range paths[:min(len(paths), 8)] {
		body = append(body, "  "+p)
	}
	if len(paths) > 8 {
		body = append(body, "  and "+kit.Itoa(len(paths)-8)+" more")
	}
	body = append(body, "Approve it anyway? (esc leaves it unapproved; X sends it back with a note.)")
	return uictx.QuestionReq{Q: uictx.Question{Title: "Out of scope: " + slug, Body: body, Verb: "approve anyway", Do: approve}}
}

// listPaths names the first few paths, and how many more there are.
func listPaths(paths []string) string {
	const shown = 3
	s := strings.Join(paths[:min(shown, len(paths))], ", ")
	if len(paths) > shown {
		s += " and " + kit.Itoa(len(paths)-shown) + " more"
	}
	return s
}

func OrWords(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (l *queue) askNeedsWork(pc *uictx.Ctx) tea.Msg {
	r := l.candidate(pc)
	if r == nil {
		return nil
	}
	in := pc.TextField()
	in.Placeholder = "what needs doing (goes under ## Review notes)"
	in.CharLimit = 2000
	in.Width = 50
	cmd := in.Focus()
	t, project, agent := pc.Opt.Tree, pc.Opt.Tree.Project, pc.Opt.Agent
	slug, commit, rel, queued := r.Slug, r.Commit, r.Rel, r.Position != nil
	body := []string{"Send " + slug + " back to its worker's lane with your note under ## Review notes; its branch " + r.Branch + " stays, and the next owner gets it."}
	if queued {
		body = append(body, "It leaves the queue (place "+kit.Itoa(*r.Position)+") and any approve is void.")
	}
	return uictx.BatchReq{uictx.QuestionReq{Q: uictx.Question{
		Title: "Needs work: " + slug, Body: body, Verb: "send back", Input: &in,
		Do: func(_ model.Lane, note string) tea.Cmd {
			if note == "" {
				return func() tea.Msg {
					return uictx.ActionMsg{Err: errors.New("needs work: say what needs doing; nothing sent back")}
				}
			}
			return uictx.Action("needs work", func() (string, error) {
				if err := stillAt(project, slug, commit, false); err != nil {
					return "", err
				}
				dst, err := t.SendBack(rel, note, planfs.Actor{AgentID: agent})
				if err != nil {
					return "", err
				}
				done := "sent " + slug + " back → " + kit.LaneOf(dst)
				if w := landing.NoteOnForge(t, slug, note, true); w != "" {
					done += " (" + w + ")"
				}
				if queued {
					if err := landing.Remove(t, slug); err != nil {
						return "", fmt.Errorf("%s, but it is still queued: %w", done, err)
					}
				}
				return done, nil
			})
		},
	}}, cmd}
}

func (l *queue) queueAdd(pc *uictx.Ctx) tea.Cmd {
	r := l.candidate(pc)
	if r == nil {
		return nil
	}
	t, slug := pc.Opt.Tree, r.Slug
	return uictx.Action("queue add", func() (string, error) {
		return "queued " + slug, landing.Add(t, slug)
	})
}

// The land dialog's choices when nothing gates a landing: waiting is the
// default; only choosing ungated lands.
const (
	LandWait    model.Lane = "wait"
	LandUngated model.Lane = "ungated"
)

// askLand names the head, the exact commit that would land and what gates
// it, then starts `fleetwatch queue land --yes` detached.
func (l *queue) askLand(pc *uictx.Ctx) tea.Msg {
	h := Head(&l.Listing)
	if h == nil || pc.Opt.Self == "" {
		return nil
	}
	if b := l.Listing.Batch; b != nil && l.bySlug(b.Slugs[0]) != nil {
		return l.askLandBatch(pc, b)
	}
	ls := &l.Listing
	self, t, slug, commit := pc.Opt.Self, pc.Opt.Tree, h.Slug, h.Commit
	body := []string{"Land the queue's head, " + slug + ": the frozen commit " + kit.Short(commit) + " on " + h.Branch +
		", merged onto " + ls.Integration + " @ " + kit.Short(ls.Tip) + "; " + ls.Integration + " moves only if nothing landed meanwhile."}
	if h.Candidate != "" {
		body = append(body, "Candidate "+kit.Short(h.Candidate)+" (tree "+kit.Short(h.Tree)+").")
	}
	body = append(body, "Now: "+string(h.State)+kit.OrEmpty(" — ", WhyOf(pc.Common, h))+".")
	switch h.State {
	case landing.Conflict, landing.Stale, landing.Failed, landing.NeedsReview, landing.Reviewed, landing.Approved, landing.NoChange, landing.Landed:
		// The lander would refuse: say so, and offer no landing.
		body = append(body, "⚠ it cannot land as it stands: X sends it back to its worker with a note, - takes it out of the queue.")
		return uictx.QuestionReq{Q: uictx.Question{Title: "Cannot land " + slug + " @ " + kit.Short(commit), Body: body}}
	}
	ungated := h.Ungated || len(ls.CheckNames) == 0
	var choices []model.Lane
	if ungated {
		body = append(body, "⚠ ungated: no checks in fleetwatch.yaml, so nothing verifies this change. Choose ungated to land it anyway.")
		choices = []model.Lane{LandWait, LandUngated}
	} else {
		body = append(body, "Checks: "+strings.Join(ls.CheckNames, ", ")+" run on the candidate unless they passed on this exact tree; it lands only if every one passes.")
	}
	body = append(body, "Runs detached: fleetwatch queue land --yes; progress in "+look.LogDir+"/land.log.")
	return uictx.QuestionReq{Q: uictx.Question{
		Title: "Land " + slug + " @ " + kit.Short(commit), Body: body, Verb: "land", Choices: choices,
		Do: func(to model.Lane, _ string) tea.Cmd {
			if ungated && to != LandUngated {
				return func() tea.Msg {
					return uictx.ActionMsg{Err: errors.New("land: nothing landed; " + slug + " is ungated, and only choosing ungated lands it")}
				}
			}
			return landCmd(t, self, slug, commit, to == LandUngated)
		},
	}}
}

// askLandBatch is the land dialog with `queue: {batch: N}`: it names the
// changes that ride together, their candidate and how it is checked; an
// entry ahead that cannot land waits, queued, and does not stop them.
func (l *queue) askLandBatch(pc *uictx.Ctx, b *landing.BatchView) tea.Msg {
	ls := &l.Listing
	first := l.bySlug(b.Slugs[0])
	self, t, slug, commit := pc.Opt.Self, pc.Opt.Tree, first.Slug, first.Commit
	body := []string{"Land a batch of " + kit.Itoa(len(b.Slugs)) + ": " + strings.Join(b.Slugs, ", ") + ", merged in this order onto " +
		ls.Integration + " @ " + kit.Short(ls.Tip) + " as candidate " + kit.Short(b.Candidate) + " (tree " + kit.Short(b.Tree) + ")."}
	body = append(body, "Checks: "+strings.Join(ls.CheckNames, ", ")+" run once on the candidate; "+ls.Integration+
		" moves to it with one compare-and-swap only if every one passes. A failure is retried once, then bisected: the culprit stays queued as failed, the rest land.")
	body = append(body, "Now: "+BatchLine(b)+".")
	body = append(body, "Runs detached: fleetwatch queue land --yes; progress in "+look.LogDir+"/land.log.")
	return uictx.QuestionReq{Q: uictx.Question{
		Title: "Land a batch of " + kit.Itoa(len(b.Slugs)), Body: body, Verb: "land",
		Do: func(model.Lane, string) tea.Cmd { return landCmd(t, self, slug, commit, false) },
	}}
}

// landCmd starts `fleetwatch queue land --yes` detached and says so; its
// end comes back as a uictx.LandDoneMsg, so a refusal reaches the screen.
func landCmd(t *planfs.Tree, self, slug, commit string, ungated bool) tea.Cmd {
	return func() tea.Msg {
		project := t.Project
		if err := stillAt(project, slug, commit, true); err != nil {
			return uictx.ActionMsg{Err: fmt.Errorf("land: %w", err)}
		}
		args := []string{"queue", "land", "--yes", "--root", project}
		if ungated {
			args = append(args, "--ungated")
		}
		log, done, err := proc.StartDetachedWatched(t, self, "land.log", args...)
		if err != nil {
			return uictx.ActionMsg{Err: fmt.Errorf("land: %w", err)}
		}
		started := uictx.ActionMsg{Done: "landing " + slug + " @ " + kit.Short(commit) + " started (log: " + RelTo(project, log) + ")"}
		return tea.BatchMsg{
			func() tea.Msg { return started },
			func() tea.Msg { return uictx.LandDoneMsg{Slug: slug, Commit: commit, Log: log, Err: <-done} },
		}
	}
}

// RelTo is path from project's root, as the operator would type it.
func RelTo(project, path string) string {
	return strings.TrimPrefix(path, project+"/")
}
