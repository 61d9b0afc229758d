package inbox

// People's comments on the forge's PRs (issue 43), listed after the
// proposals and the paused runs: each comment a row, its text in the
// preview, and D taking its PR's comments out of the inbox
// (landing.DismissComments; they stay on the forge). Every byte of a
// comment is the forge's, so every line is drawn through termtext.

import (
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/forge"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// comment is one row: a comment and the PR it is on.
type comment struct {
	th *uictx.Thread
	c  forge.Comment
}

// maxCommentLines bounds a comment in the preview and the detail: the
// forge is not trusted to be brief.
const maxCommentLines = 200

// filterComments lists the threads' comments the filter f lets through,
// oldest first within each PR.
func filterComments(ths []uictx.Thread, f string) []comment {
	var out []comment
	for i := range ths {
		th := &ths[i]
		for _, c := range th.Comments {
			if f == "" || kit.AnyContains(f, th.Slug, c.Author, c.Body, c.Path, "comment") {
				out = append(out, comment{th, c})
			}
		}
	}
	return out
}

// commentRow is the selected comment, nil when the cursor is elsewhere.
func (l *Pane) commentRow() *comment {
	if i := l.Cursor - len(l.shown) - len(l.paused) - len(l.asking); i >= 0 && i < len(l.comments) {
		return &l.comments[i]
	}
	return nil
}

// commentState is the state cell: "comment on PR #12".
func commentState(c *comment) string { return "comment on PR #" + kit.Itoa(c.th.Number) }

// commentWhere is "path:line" for a comment on a line, "" on the PR.
func commentWhere(c *comment) string {
	switch {
	case c.c.Path == "":
		return ""
	case c.c.Line > 0:
		return c.c.Path + ":" + kit.Itoa(c.c.Line)
	}
	return c.c.Path
}

// commentHead is the comment's first line of text, after where it is.
func commentHead(c *comment) string {
	first, _, _ := strings.Cut(strings.TrimSpace(c.c.Body), "\n")
	if w := commentWhere(c); w != "" {
		return w + ": " + first
	}
	return first
}

// commentLine is a comment's row in the inbox's columns.
func commentLine(cm *uictx.Common, c *comment, cols inboxCols, selected bool) string {
	var b strings.Builder
	b.WriteString(kit.Gutter(selected))
	b.WriteString(kit.Fit(termtext.Line(c.th.Slug), cols.slug) + " ")
	b.WriteString(kit.Fit(termtext.Line(c.c.Author), cols.agent) + " ")
	b.WriteString(kit.FitRight("", cols.n) + " ")
	state := kit.Fit(commentState(c), cols.state)
	if !cm.Plain {
		state = cm.St.Warn.Render(state)
	}
	b.WriteString(state + " ")
	age := "—"
	if !c.c.At.IsZero() {
		age = kit.Coarse(cm.Now - float64(c.c.At.UnixNano())/1e9)
	}
	b.WriteString(kit.Fit(age, cols.age) + " ")
	if cols.scope > 0 {
		b.WriteString(kit.Fit("", cols.scope) + " ")
	}
	b.WriteString(kit.Fit(termtext.Line(commentHead(c)), cols.problem))
	return b.String()
}

// commentLines are what the preview and the detail show of a comment:
// who wrote it on which PR, where, when, the text, and what d does.
func commentLines(cm *uictx.Common, c *comment) []string {
	line := termtext.Line
	out := []string{line(commentState(c) + " by " + c.c.Author + kit.OrEmpty(" · ", commentWhere(c)))}
	if !c.c.At.IsZero() {
		out = append(out, cm.St.Dim.Render("written "+c.c.At.Local().Format(time.DateTime)))
	}
	out = append(out, cm.St.Dim.Render(line(c.th.URL)), "")
	body := strings.Split(strings.TrimRight(c.c.Body, "\n"), "\n")
	if len(body) > maxCommentLines {
		body = append(body[:maxCommentLines], "(cut: the rest is on the forge)")
	}
	for _, l := range body {
		out = append(out, line(l))
	}
	n := len(c.th.Comments)
	return append(out, "", cm.St.Dim.Render("D takes PR #"+kit.Itoa(c.th.Number)+"'s "+kit.Plural(n, "comment", "comments")+
		" out of the inbox (they stay on the forge)"))
}

// commentWidths widens the columns for the comments' cells.
func commentWidths(cs []comment, slug, agent, state *int) {
	for i := range cs {
		c := &cs[i]
		*slug, *agent = max(*slug, kit.CellWidth(c.th.Slug)), max(*agent, kit.CellWidth(c.c.Author))
		*state = max(*state, kit.CellWidth(commentState(c)))
	}
}

// askDismiss is D: a confirm, then the PR's comments out of the inbox.
func (l *Pane) askDismiss(pc *uictx.Ctx) tea.Msg {
	c := l.commentRow()
	if c == nil {
		return nil
	}
	t, slug, num, n := pc.Opt.Tree, c.th.Slug, c.th.Number, len(c.th.Comments)
	what := kit.Plural(n, "comment", "comments") + " on PR #" + kit.Itoa(num)
	return uictx.QuestionReq{Q: uictx.Question{
		Title: "Dismiss " + what,
		Body: []string{"Take the " + what + " (" + termtext.Line(slug) + ") out of the inbox: they stay on the forge, " +
			"and newer comments come in at the next reading of it."},
		Verb: "dismiss",
		Do: func(model.Lane, string) tea.Cmd {
			return uictx.Action("dismiss", func() (string, error) {
				return "dismissed the " + what + " from the inbox", landing.DismissComments(t, slug)
			})
		},
	}}
}

// openComment is enter on a comment: it whole, full screen.
func openComment(c comment) tea.Msg {
	title := termtext.Line(c.th.Slug) + " · " + commentState(&c)
	return uictx.Detail("inbox\x00comment\x00"+c.th.Slug+"\x00"+strconv.FormatInt(c.c.ID, 10), title, func() func(*uictx.Ctx) []string {
		return func(pc *uictx.Ctx) []string { return commentLines(pc.Common, &c) }
	})
}
