package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

const newLong = `Writes .plans/<lane>/SLUG.md from the project's plan template
(.anchor/templates/plan.md or anchor/templates/plan.md, else a built-in one
with Goal, Context, Steps and Done when) with the header fields given, then
opens it in $VISUAL or $EDITOR when stdin is a terminal (not with --no-edit).
Without --title the title is the slug in words: fix-login → "Fix login".
A slug taken in any lane (completed/ too), a bad slug, an empty title or a
lane other than drafts, bugs or features exits 2 and writes nothing; bugs and
features need what promote needs (--models and a ## Done when section).
Depends on slugs that name no plan or would make a cycle are warnings.

--goal and --done-when fill the Goal and Done when sections. A plan for bugs
or features that no editor opens (--no-edit, or stdin no terminal) needs both,
or it exits 2 and writes nothing: no agent takes a plan whose Goal or Done
when is empty. A draft may start empty.`

type newFlags struct {
	common
	lane, title, value, priority string
	models, depends              string
	goal                         string
	doneWhen                     []string
	local, noEdit                bool
}

func newCmd() *cobra.Command {
	cmd := leaf("new SLUG", "write a new plan from the project's template and open it in $EDITOR", func(fs *pflag.FlagSet) body {
		var f newFlags
		f.registerRoot(fs)
		agentFlag(fs, &f.agent, operatorAgentID(), "who is acting, for the event log")
		fs.StringVar(&f.lane, "lane", string(model.Drafts), "drafts, bugs or features")
		fs.StringVar(&f.title, "title", "", "the plan's title (default: the slug in words)")
		fs.StringVar(&f.value, "value", "medium", "high, medium or low")
		fs.StringVar(&f.priority, "priority", "P2", "P1, P2 or P3")
		fs.StringVar(&f.models, "models", "", "Preferred models: tiers or model names, comma separated")
		fs.StringVar(&f.depends, "depends", "", "Depends on: plan slugs, comma separated")
		fs.StringVar(&f.goal, "goal", "", "the Goal section: what the plan is for, one line")
		fs.StringArrayVar(&f.doneWhen, "done-when", nil, "a Done when bullet: how to tell it is finished (repeat for more)")
		fs.BoolVar(&f.local, "local", false, "a private plan, <slug>.local.md (git ignores it)")
		fs.BoolVar(&f.noEdit, "no-edit", false, "do not open the editor")
		return func(pos []string, stdout, stderr io.Writer) int {
			return f.run(fs, pos, stdout, stderr)
		}
	})
	cmd.Long = newLong
	return cmd
}

func (f *newFlags) run(fs *pflag.FlagSet, pos []string, stdout, stderr io.Writer) int {
	if len(pos) != 1 {
		return fail(stderr, exitError, "new: want exactly one slug, got %d", len(pos))
	}
	lane, known := model.ParseLane(f.lane)
	if !known {
		return fail(stderr, exitError, "new: --lane must be %s, not %q", model.Alternatives(model.NewPlanLanes()), f.lane)
	}
	title := f.title
	if !fs.Changed("title") {
		title = slugWords(pos[0])
	}
	n := model.NewPlan{
		Slug: pos[0], Title: title, Lane: lane, Value: f.value, Priority: f.priority,
		Preferred: model.SplitList(f.models), DependsOn: model.SplitList(f.depends), Local: f.local,
		Goal: f.goal, DoneWhen: f.doneWhen,
	}
	editing := !f.noEdit && term.IsTerminal(int(os.Stdin.Fd()))
	n.Unedited = !editing
	t, err := f.open()
	if err != nil {
		return failErr(stderr, "", err)
	}
	rel, err := t.CreatePlan(n, f.agent)
	if errors.Is(err, planfs.ErrEmptyPlan) {
		// Refused rather than written to drafts/: the plan goes where --lane says or nowhere.
		return fail(stderr, exitError, "new: %s/%s would have an empty goal or done when, and no agent takes such a plan: give --goal TEXT and --done-when TEXT, or leave out --lane to write a draft", lane, n.Name())
	}
	if err != nil {
		return failErr(stderr, "new", err)
	}
	if len(n.DependsOn) > 0 {
		warnDeps(t, n, stderr)
	}
	fmt.Fprintln(stdout, t.Abs(rel))
	if !editing {
		return exitOK
	}
	return editInTerminal(t, rel, f.agent, stderr)
}

// warnDeps says which Depends on slugs name no plan or make a cycle.
func warnDeps(t *planfs.Tree, n model.NewPlan, stderr io.Writer) {
	snap, err := t.Scan()
	if err != nil {
		return
	}
	for _, p := range model.ProposedDeps(snap, n.Slug, n.DependsOn, t.History()) {
		what := "names no plan in any lane"
		if p.Reason == "cycle" {
			what = "would make a dependency cycle"
		}
		say(stderr, "warning: %s: depends on %s, which %s", n.Slug, p.Slug, what)
	}
}

// editInTerminal opens the plan's copy in the operator's editor on this
// terminal and writes it back.
func editInTerminal(t *planfs.Tree, rel, agent string, stderr io.Writer) int {
	words, err := proc.Editor(os.Getenv)
	if err != nil {
		say(stderr, "warning: not opened in an editor: %v", err)
		return exitOK
	}
	c, err := t.CopyForEdit(rel)
	if err != nil {
		return failErr(stderr, "new", err)
	}
	cmd := proc.EditorCmd(words, c.Path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fail(stderr, exitError, "new: editor %s: %v; the plan is as written, your copy is in %s", words[0], err, c.Path)
	}
	if _, err := t.WriteBack(c, agent); err != nil {
		return failErr(stderr, "new", err)
	}
	return exitOK
}

// slugWords is the title a slug makes: `fix-login_page` → "Fix login page".
func slugWords(slug string) string {
	words := strings.FieldsFunc(slug, func(r rune) bool { return r == '-' || r == '_' || unicode.IsSpace(r) })
	s := strings.Join(words, " ")
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}
