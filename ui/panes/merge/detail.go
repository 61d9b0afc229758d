package merge

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/mergekeys"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// mergeDetailLines is how many lines of each check's log the detail shows.
const mergeDetailLines = 15

// open is enter: the candidate's facts, each
// check with its log's tail, and the peer reviews, newest first.
func (l *Pane) open(pc *uictx.Ctx) tea.Msg {
	r := l.row()
	if r == nil {
		return nil
	}
	t, s := pc.Opt.Tree, *r
	return uictx.Detail("merge\x00"+s.Slug, s.Slug+" · "+string(s.State), func() func(*uictx.Ctx) []string {
		logs := make([][]string, len(s.Checks))
		logErrs := make([]error, len(s.Checks))
		for i, c := range s.Checks {
			if c.Log != "" {
				logs[i], logErrs[i] = look.LogTail(c.Log, mergeDetailLines)
			}
		}
		texts := make([]string, len(s.Reviews))
		textErrs := make([]error, len(s.Reviews))
		for i, rv := range s.Reviews {
			texts[i], _, textErrs[i] = t.ReadReviewText(rv.Path)
		}
		return func(pc *uictx.Ctx) []string { return Detail(pc.Common, &s, logs, logErrs, texts, textErrs) }
	})
}

func Detail(cm *uictx.Common, s *landing.Status, logs [][]string, logErrs []error, texts []string, textErrs []error) []string {
	line := termtext.Line
	out := []string{
		line(s.Branch + " @ " + kit.Short(s.Commit) + " · " + kit.Plural(s.Ahead, "commit", "commits") + " ahead, " + kit.Itoa(s.Behind) + " behind base " + kit.Short(s.Base)),
	}
	if w := mergekeys.WhyOf(cm, s); w != "" {
		out = append(out, line("why: "+w))
	}
	if s.Author != "" {
		out = append(out, line("author: "+s.Author))
	}
	switch {
	case s.ApprovedBy != "" && s.Approval != nil:
		out = append(out, line("approved by "+s.ApprovedBy+" at "+kit.Short(s.Approval.Commit)+", "+s.Approval.At.Format(time.DateTime)))
	case s.ApprovedBy != "":
		out = append(out, line("approved by "+s.ApprovedBy))
	case s.Approval != nil:
		out = append(out, line("approve by "+s.Approval.By+" of "+kit.Short(s.Approval.Commit)+" is stale: the branch moved since"))
	case cm.Opt.ReadOnly:
		out = append(out, "not approved") // a viewer's screen names no action
	default:
		out = append(out, "not approved (A approves)")
	}
	if s.Candidate != "" {
		out = append(out, line("candidate "+kit.Short(s.Candidate)+" · tree "+kit.Short(s.Tree)))
	}
	out = append(out, prLines(cm, s.PR)...)
	if v := s.ScopeViolations; len(v) > 0 {
		out = append(out, "", cm.St.Title.Render(line("⚠ Out of scope: "+mergekeys.CountPaths(len(v))+" its plan's scope does not allow")))
		for _, p := range v {
			out = append(out, "  "+line(p))
		}
	}
	out = append(out, "", cm.St.Title.Render("Checks")+"  "+cm.St.Dim.Render(strings.TrimPrefix(checkLegend, "checks: ")))
	if len(s.Checks) == 0 {
		out = append(out, "  "+line(mergekeys.OrWords(mergekeys.WhyOf(cm, s), "no checks configured")))
	}
	for i, c := range s.Checks {
		facts := mergekeys.ResultGlyph(c) + " " + c.Name + " " + string(c.Result)
		if c.Log != "" {
			facts += " · exit " + kit.Itoa(c.Exit) + " · " + c.Took.Round(time.Millisecond).String() + " · " + mergekeys.RelTo(cm.Opt.Tree.Project, c.Log)
		}
		if c.Flaky {
			facts += " · flaky: it failed first, log " + mergekeys.RelTo(cm.Opt.Tree.Project, c.FlakyLog)
		}
		if c.Note != "" {
			facts += " · " + c.Note
		}
		out = append(out, line(facts))
		if logErrs[i] != nil {
			out = append(out, "    "+line("log: "+logErrs[i].Error()))
		}
		for _, l := range logs[i] {
			out = append(out, "    "+cm.St.Dim.Render(line(l)))
		}
	}
	out = append(out, "", cm.St.Title.Render("Peer reviews, newest first"))
	if len(s.Reviews) == 0 {
		out = append(out, "  none yet (v asks another worker for one)")
	}
	for i, rv := range s.Reviews {
		head := rv.Verdict + " by " + rv.Reviewer + " at " + kit.Short(rv.Commit) + ", " + rv.At.Format(time.DateTime)
		if rv.Stale {
			head += " · stale: the branch moved since"
		}
		out = append(out, "", cm.St.Bold.Render(line(head)))
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
