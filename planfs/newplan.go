package planfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/model"
)

// TemplatePaths are where a project keeps its plan template, relative to
// the project, in the order they are tried: anchor's two spellings.
var TemplatePaths = []string{".anchor/templates/plan.md", "anchor/templates/plan.md"}

// Template is the body new plans start from: the project's template when it
// has one (source names it), else the built-in one (source ""). A template
// that is a symlink, not a file or unreadable is an error naming it, never
// silently replaced by the built-in one.
func (t *Tree) Template() (text, source string, err error) {
	for _, rel := range TemplatePaths {
		f, err := safepath.OpenFile(t.root(), rel, os.O_RDONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", rel, planErr(rel, ErrUnreadable, "plan template: %v", errText(err))
		}
		data, err := io.ReadAll(io.LimitReader(f, HeaderLimit))
		f.Close()
		if err != nil {
			return "", rel, planErr(rel, ErrUnreadable, "plan template: %v", errText(err))
		}
		return strings.ToValidUTF8(string(data), "\uFFFD"), rel, nil
	}
	return model.BuiltinTemplate(), "", nil
}

// SlugInUse is the rel of a file in any lane that answers to slug: its .md
// or .local.md, or completed/'s dated form, compared as dependencies are
// (case folded); "" when none. It lists the lane folders, reading no plan.
func (t *Tree) SlugInUse(slug string) (string, error) {
	want := model.DepKey(slug)
	for _, l := range model.Lanes {
		entries, err := os.ReadDir(t.Abs(string(l)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", planErr(string(l)+"/", ErrUnreadable, "cannot list: %v", errText(err))
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasSuffix(name, ".md") && !strings.EqualFold(name, "README.md") && model.DepKey(model.SlugOf(name)) == want {
				return string(model.RelOf(l, name)), nil
			}
		}
	}
	return "", nil
}

// BranchInUse returns the rel of a plan in any lane, completed/ too, whose
// slug differs from slug but makes the same branch (model.SameBranch), or
// "" when the branch is free.
func (t *Tree) BranchInUse(slug string) (string, error) {
	for _, l := range model.Lanes {
		entries, err := os.ReadDir(t.Abs(string(l)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", planErr(string(l)+"/", ErrUnreadable, "cannot list: %v", errText(err))
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasSuffix(name, ".md") && !strings.EqualFold(name, "README.md") && model.SameBranch(model.SlugOf(name), slug) {
				return string(model.RelOf(l, name)), nil
			}
		}
	}
	return "", nil
}

// CreatePlan writes a new plan from the project's template with n's header
// and returns its rel. It writes nothing, and says why in one line naming
// the plan, when the slug is bad or answers to a plan in any lane, the
// title is empty, the lane is not drafts/bugs/features, a ready lane's
// plan would fail promote's checks or, Unedited, leave its Goal or Done when
// empty, or a folder on the way is a symlink.
// The file appears whole or not at all and never replaces one (AddPlan).
func (t *Tree) CreatePlan(n model.NewPlan, agent string) (string, error) {
	n = n.Normalized()
	rel := string(model.RelOf(n.Lane, n.Name()))
	if err := t.refuse(rel); err != nil {
		return "", err
	}
	if err := t.newPlanProblem(n, rel); err != nil {
		return "", err
	}
	tmpl, source, err := t.Template()
	if err != nil {
		return "", err
	}
	text := n.Render(tmpl)
	if n.Lane != model.Drafts {
		if err := readyPlanProblem(n, rel, text, source); err != nil {
			return "", err
		}
	}
	return t.addPlan(n.Lane, n.Name(), text, Event{Event: "create", AgentID: agent})
}

// newPlanProblem refuses n (to be written at rel) for a bad slug or
// header, or a slug or branch another plan has.
func (t *Tree) newPlanProblem(n model.NewPlan, rel string) error {
	if err := model.CheckSlug(n.Slug); err != nil {
		if n.Slug == "" {
			return noSlugError(err.Error())
		}
		return planErr(n.Slug, ErrBadTarget, "%v", err)
	}
	if err := n.Check(); err != nil {
		return planErr(rel, ErrBadTarget, "%v", err)
	}
	if have, err := t.SlugInUse(n.Slug); err != nil {
		return err
	} else if have != "" {
		return planErr(rel, ErrDestExists, "slug %s is taken by %s (slugs are unique across lanes)", n.Slug, have)
	}
	if have, err := t.BranchInUse(n.Slug); err != nil {
		return err
	} else if have != "" {
		return planErr(rel, ErrDestExists, "%s would share branch %s with %s; two plans never share a branch: pick another slug",
			n.Slug, model.FeatureBranch(n.Slug), have)
	}
	return nil
}

// readyPlanProblem refuses text, rendered from the template at source
// ("" for the built-in one), in a ready lane when promote would refuse it
// or, unedited, its Goal or Done when is empty.
func readyPlanProblem(n model.NewPlan, rel, text, source string) error {
	if problems := PromoteProblems(model.ParseHeader(text)); len(problems) > 0 {
		from := "the built-in template"
		if source != "" {
			from = source
		}
		return planErr(rel, ErrNeedsForce, "not written to %s/, as promote would refuse it: %s (from %s; start it in drafts/)",
			n.Lane, strings.Join(problems, "; "), from)
	}
	if _, why := model.ParseHeader(text).BlankProblem(); why != "" && n.Unedited {
		return planErr(rel, ErrEmptyPlan, "not written to %s/, as no one edits it: %s", n.Lane, why)
	}
	return nil
}

// noSlugError is the refusal of a plan with no slug: there is no plan to
// name in front of it. errors.Is matches ErrBadTarget.
type noSlugError string

func (e noSlugError) Error() string { return string(e) }

func (noSlugError) Is(target error) bool { return target == ErrBadTarget }
