package merge

// The forge's side of a candidate (issue 43): its pull request as the
// engine last recorded it (landing.Status.PR, var/fleet/forge/), shown as
// a column only when some candidate has one, in the detail, and opened
// with o. The pane never calls the forge: r asks the root to read it in
// the background (ui/forgesync).

import (
	"time"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/mergekeys"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// prHeader is the PR column's title.
const prHeader = "PR"

// checksGlyph is the forge's combined status of the PR's head as one
// symbol: the same glyphs as fleetwatch's own checks.
func checksGlyph(checks string) string {
	switch checks {
	case "success":
		return "✓"
	case "failure", "error":
		return "✗"
	case "pending":
		return "…"
	case "":
		return ""
	}
	return "?"
}

// PRCell is "#12 open ✓": the PR's number, its state and its checks;
// "—" without a PR.
func PRCell(s *landing.Status) string {
	pr := s.PR
	if pr == nil || pr.Number == 0 {
		return "—"
	}
	cell := "#" + kit.Itoa(pr.Number) + " " + termtext.Line(mergekeys.OrWords(pr.State, "?"))
	if g := checksGlyph(pr.Checks); g != "" {
		cell += " " + g
	}
	return cell
}

// anyPR reports whether some candidate has a PR: the column shows then.
func anyPR(items []landing.Status) bool {
	for i := range items {
		if items[i].PR != nil {
			return true
		}
	}
	return false
}

// prLines are the detail's PR section: nothing without a PR.
func prLines(cm *uictx.Common, pr *landing.PR) []string {
	if pr == nil {
		return nil
	}
	line := termtext.Line
	out := []string{"", cm.St.Title.Render("Pull request")}
	if pr.Number == 0 {
		out = append(out, "  not opened yet (the driver opens it at review; r reads the forge)")
	} else {
		head := "  #" + kit.Itoa(pr.Number) + " " + line(mergekeys.OrWords(pr.State, "state unknown")) + " · checks " + line(mergekeys.OrWords(pr.Checks, "none reported"))
		out = append(out, head, "  "+line(pr.URL))
	}
	if pr.Branch != "" {
		out = append(out, "  "+line("branch "+pr.Branch+" · pushed "+kit.Short(pr.Pushed)+kit.OrEmpty(" · head ", kit.Short(pr.Head))))
	}
	if !pr.Read.IsZero() {
		out = append(out, "  read "+pr.Read.Local().Format(time.DateTime))
	}
	if pr.Trouble != "" {
		t := "  ⚠ " + line(pr.Trouble)
		if !cm.Plain {
			t = cm.St.Bad.Render(t)
		}
		out = append(out, t)
	}
	if n := len(pr.Comments); n > 0 {
		out = append(out, "  "+kit.Plural(n, "comment", "comments")+" from people waiting in the inbox (7)")
	}
	return out
}

// forgeLine is the notice above the table when the last reading of the
// forge failed; "" otherwise.
func forgeLine(cm *uictx.Common, f uictx.Forge) string {
	if f.Err == nil {
		return ""
	}
	s := "⚠ forge: " + termtext.Line(f.Err.Error())
	if !f.At.IsZero() {
		s += " (read at " + f.At.Local().Format("15:04:05") + ")"
	}
	if !cm.Plain {
		s = cm.St.Bad.Render(s)
	}
	return s
}

// prURL is the selected candidate's PR address, "" without one.
func (l *Pane) prURL() string {
	if r := l.row(); r != nil && r.PR != nil && r.PR.Number != 0 {
		return r.PR.URL
	}
	return ""
}

// syncForgeKeys sets o and r: o on a candidate with a PR, r wherever the
// project has a forge.
func (l *Pane) syncForgeKeys(pc *uictx.Ctx, set uictx.SetKey, onRow bool) {
	k := &pc.Keys.Merge
	here := pc.Shown == l.id
	switch {
	case !l.forge:
		set(&k.Browse, false, "open PR: this project has no forge (forge: in fleetwatch.yaml)")
		set(&k.Sync, false, "read forge: this project has no forge (forge: in fleetwatch.yaml)")
		return
	case !onRow:
		set(&k.Browse, false, "open PR: select a candidate in the merge pane (6)")
	default:
		set(&k.Browse, l.prURL() != "", "open PR: "+termtext.Line(l.row().Slug)+" has no PR yet (the driver opens one at review; r reads the forge)")
	}
	set(&k.Sync, here && pc.Merge.Forge.On, "read forge: in the merge pane (6), once the forge was looked at")
}
