package landing

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/forge"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
)

// With a forge (`forge:` in fleetwatch.yaml) each plan in review has one
// pull request, kept in step by the driver (which opens it) and the queue
// (which pushes the candidate it checks to the PR's branch, posts the
// checks on that exact commit, and lands it). What fleetwatch knows of each
// PR is kept under var/fleet/forge/<slug>.json, which the faces read: no
// face calls the forge to draw a screen. The forge's answers confirm or
// refuse a commit fleetwatch chose; they never choose one.

// forgeDir holds the PR records.
const forgeDir = "var/fleet/forge"

// PR is what fleetwatch knows of a plan's pull request.
type PR struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	State  string `json:"state"`            // open, closed or merged, as last read
	Checks string `json:"checks,omitempty"` // the head's combined status, as last read
	Branch string `json:"branch"`           // the PR's head branch on the forge
	// Tip is the plan's branch tip the last push was for, Pushed the
	// commit pushed (Tip itself, or the queue's candidate built on it).
	Tip    string `json:"tip"`
	Pushed string `json:"pushed"`
	// Head is the PR's head commit as the forge last said.
	Head string    `json:"head,omitempty"`
	Read time.Time `json:"read"`
	// Trouble is the last call's failure, "" after one that worked.
	Trouble string `json:"trouble,omitempty"`
	// SeenReview and SeenComment are the newest ids already taken in, so
	// an approval or a comment is taken in once.
	SeenReview  int64 `json:"seen_review,omitempty"`
	SeenComment int64 `json:"seen_comment,omitempty"`
	// Comments are people's comments on the forge waiting in the inbox.
	Comments []forge.Comment `json:"comments,omitempty"`
	// Updated is the PR's updated time as the forge said when its
	// reviews and comments were last read; Quiet how many readings since
	// skipped them, the listing saying nothing changed.
	Updated time.Time `json:"updated,omitzero"`
	Quiet   int       `json:"quiet,omitempty"`
}

// maxInboxComments bounds the comments kept per PR: the forge is not
// trusted to be brief.
const maxInboxComments = 50

// ReadPR is slug's PR record; nil when it has none.
func ReadPR(project, slug string) (*PR, error) {
	f, err := safepath.OpenFile(project, forgeDir+"/"+slug+".json", os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pr PR
	if err := json.NewDecoder(f).Decode(&pr); err != nil {
		return nil, fmt.Errorf("%s: %v (delete it: forge sync writes it again)", f.Name(), err)
	}
	return &pr, nil
}

// editPR changes slug's PR record under its lock.
func editPR(project, slug string, edit func(pr *PR) error) (PR, error) {
	unlock, err := flockRel(project, forgeDir+"/"+slug+".lock")
	if err != nil {
		return PR{}, err
	}
	defer unlock()
	old, err := ReadPR(project, slug)
	if err != nil {
		return PR{}, err
	}
	var pr PR
	if old != nil {
		pr = *old
	}
	if err := edit(&pr); err != nil {
		return pr, err
	}
	dir, err := safepath.OpenDir(project, forgeDir, true)
	if err != nil {
		return pr, err
	}
	defer dir.Close()
	data, err := json.MarshalIndent(pr, "", "  ")
	if err != nil {
		return pr, err
	}
	return pr, atomicfile.WriteAt(dir, slug+".json", append(data, '\n'), 0o644)
}

// ForgeOn reports whether project lands through a forge.
func ForgeOn(project string) bool {
	s, err := config.Load(project)
	return err == nil && s.Forge.On()
}

// forgeOf opens the forge of s; nil when it has none.
var forgeOf = func(s config.Settings) (forge.Forge, error) {
	if !s.Forge.On() {
		return nil, nil
	}
	return forge.Open(s.Forge)
}

// forgeGit runs git for the forge: the token in the environment for the
// forge's URL only, and the settings a hostile repository config could use
// to send it elsewhere (a proxy, no TLS check, redirects) pinned on the
// command line, which wins over the repository's own.
func forgeGit(ctx context.Context, f forge.Forge, dir string, args ...string) (string, error) {
	prefix := f.Remote()
	pinned := []string{
		"-c", "http.proxy=", "-c", "http." + prefix + ".proxy=",
		"-c", "http.sslVerify=true", "-c", "http." + prefix + ".sslVerify=true",
		"-c", "http.followRedirects=false", "-c", "credential.helper=",
		"-c", "core.askPass=",
	}
	env := append(f.GitEnv(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	r, err := gitenv.Run(ctx, gitenv.Call{Dir: dir, Args: append(pinned, args...), Env: env, Timeout: 2 * time.Minute})
	return r.Text(), err
}

// forgePush puts commit at branch on the forge, only while the forge's
// branch is at lease ("" means it must not exist; "*" means whatever it is).
func forgePush(ctx context.Context, f forge.Forge, project, commit, branch, lease string) error {
	ref := model.BranchRef(branch)
	leaseArg := "--force-with-lease=" + ref + ":" + lease
	if lease == "*" {
		leaseArg = "--force"
	}
	_, err := forgeGit(ctx, f, project, "push", "--quiet", "--no-verify", leaseArg, f.Remote(), commit+":"+ref)
	if err != nil {
		return fmt.Errorf("push of %s to %s on %s: %w", short(commit), branch, f.Web(), err)
	}
	return nil
}

// forgeFetch is the commit branch is at on the forge, fetched into
// refs/fleetwatch/forge/<branch>; "" when the forge has no such branch.
func forgeFetch(ctx context.Context, f forge.Forge, project, branch string) (string, error) {
	out, err := forgeGit(ctx, f, project, "ls-remote", "--heads", f.Remote(), model.BranchRef(branch))
	if err != nil {
		return "", fmt.Errorf("could not read %s on %s: %w", branch, f.Web(), err)
	}
	sha, _, _ := strings.Cut(strings.TrimSpace(out), "\t")
	if sha == "" {
		return "", nil
	}
	if !treeID.MatchString(sha) {
		return "", fmt.Errorf("%s answered %q for %s", f.Web(), clipLine(out), branch)
	}
	if !hasCommit(project, sha) {
		if _, err := forgeGit(ctx, f, project, "fetch", "--quiet", "--no-tags", f.Remote(), "+"+model.BranchRef(branch)+":refs/fleetwatch/forge/"+branch); err != nil {
			return "", fmt.Errorf("could not fetch %s from %s: %w", branch, f.Web(), err)
		}
	}
	return sha, nil
}

func hasCommit(project, sha string) bool {
	_, err := git(project, "cat-file", "-e", sha+"^{commit}")
	return err == nil
}

// clipLine is s on one line, at most 200 bytes: for errors quoting a forge.
func clipLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// Publish pushes slug's branch to the forge and opens its PR, or brings
// the open one up to date: the plan's title and text, what its runs did
// and spent, its scope and where the plan is. No forge: nothing, nil.
func Publish(ctx context.Context, t *planfs.Tree, slug string) (*PR, error) {
	s, err := config.Load(t.Project)
	if err != nil || !s.Forge.On() {
		return nil, err
	}
	f, err := forgeOf(s)
	if err != nil {
		return nil, err
	}
	base, err := Integration(t.Project, s)
	if err != nil {
		return nil, err
	}
	branch := model.FeatureBranch(slug)
	tip := revParse(t.Project, model.BranchRef(branch))
	if tip == "" {
		return nil, refused("%s has no branch %s to publish", slug, branch)
	}
	rel := reviewRel(slug)
	title := planTitle(t, rel, slug)
	body := prBody(t, f, s, slug, rel, base)
	pr, err := editPR(t.Project, slug, func(pr *PR) error {
		if err := publishPush(ctx, f, t.Project, tip, branch, pr.Pushed); err != nil {
			pr.Trouble = err.Error()
			return err
		}
		pr.Branch, pr.Tip, pr.Pushed = branch, tip, tip
		got, err := f.Ensure(ctx, forge.NewPR{Head: branch, Base: base, Title: title, Body: body})
		if err != nil {
			pr.Trouble = err.Error()
			return err
		}
		pr.take(got, t.Now())
		return nil
	})
	if err != nil {
		return nil, err
	}
	t.LogEvent(planfs.Event{Event: "pr", Slug: slug, To: pr.URL, Reason: fmt.Sprintf("#%d at %s", pr.Number, short(tip))})
	return &pr, nil
}

// publishPush puts the plan's tip on its branch on the forge, over what
// fleetwatch pushed there last (pushed), or over a commit the tip already
// holds; a commit somebody else pushed there is never thrown away.
func publishPush(ctx context.Context, f forge.Forge, project, tip, branch, pushed string) error {
	if err := forgePush(ctx, f, project, tip, branch, pushed); err == nil {
		return nil
	}
	far, err := forgeFetch(ctx, f, project, branch)
	if err != nil {
		return err
	}
	if far == tip {
		return nil
	}
	if in, _ := isAncestor(project, far, tip); far != "" && !in {
		return refused("%s on %s is at %s, which fleetwatch did not push and %s does not hold: bring it into the plan's branch (git fetch %s %s), or delete it there",
			branch, f.Web(), short(far), short(tip), f.Remote(), branch)
	}
	return forgePush(ctx, f, project, tip, branch, far)
}

// take records what the forge said of the PR.
func (pr *PR) take(got forge.PR, now time.Time) {
	pr.Number, pr.URL, pr.State, pr.Head, pr.Read, pr.Trouble = got.Number, got.URL, got.State, got.HeadSHA, now, ""
	if got.Checks != "" {
		pr.Checks = got.Checks
	}
}

// maxBodyPlan bounds the plan's text in a PR's body.
const maxBodyPlan = 32 << 10

// prBody is a PR's description: the plan, its runs, its scope, its file.
func prBody(t *planfs.Tree, f forge.Forge, s config.Settings, slug, rel, base string) string {
	var b strings.Builder
	text, _, _ := t.ReadPlan(rel)
	if len(text) > maxBodyPlan {
		text = text[:maxBodyPlan] + "\n\n…(cut here; the whole plan is in the file below)"
	}
	fmt.Fprintf(&b, "Plan `%s`: [.plans/%s](%s)\n\n", slug, rel, forge.FileURL(f, base, ".plans/"+rel))
	if runs := runLines(t.Project, slug, s); runs != "" {
		b.WriteString("### Runs\n\n" + runs + "\n")
	}
	if scope, found, _ := model.ParseScope(text); found {
		b.WriteString("### Scope\n\n")
		for _, p := range scope.Patterns {
			fmt.Fprintf(&b, "- `%s`\n", p)
		}
		b.WriteString("\n")
	}
	b.WriteString("### The plan\n\n" + text + "\n\n---\nOpened by fleetwatch; it lands through the queue, which checks the exact commit that lands.\n")
	return b.String()
}

// forgeTimeout bounds a step's calls to the forge.
const forgeTimeout = 2 * time.Minute

// PublishSoon is Publish bounded by forgeTimeout, for the driver: a forge
// that is down costs the run a note, never its plan.
func PublishSoon(t *planfs.Tree, slug string) string {
	ctx, cancel := context.WithTimeout(context.Background(), forgeTimeout)
	defer cancel()
	pr, err := Publish(ctx, t, slug)
	switch {
	case err != nil:
		return "the pull request was not opened (" + clipLine(err.Error()) + "); fleetwatch queue sync tries again"
	case pr == nil:
		return ""
	}
	return fmt.Sprintf("pull request #%d: %s", pr.Number, pr.URL)
}

// maxRunLines bounds the runs a PR's body lists (the newest).
const maxRunLines = 10

// runLines are slug's runs from the ledger, one line each, newest last,
// and their sum: who ran it, how it ended, what it spent.
func runLines(project, slug string, s config.Settings) string {
	var lines []string
	var in, out int64
	var cost float64
	_, _ = ledger.Read(project, time.Time{}, func(r ledger.Run) {
		if model.SlugOf(path.Base(r.Plan)) != slug && r.Plan != slug {
			return
		}
		in, out, cost = in+r.Input, out+r.Output, cost+r.CostUSD
		lines = append(lines, fmt.Sprintf("- %s %s by `%s` (%s, %s): exit %d, %d in / %d out tokens, $%.2f",
			r.End.UTC().Format("2006-01-02 15:04"), cmp.Or(r.Mode, "build"), r.Agent, cmp.Or(r.Endpoint, "-"), cmp.Or(r.Model, "-"), r.Exit, r.Input, r.Output, r.CostUSD))
	})
	if len(lines) == 0 {
		return ""
	}
	if len(lines) > maxRunLines {
		lines = append([]string{fmt.Sprintf("- … %d earlier runs", len(lines)-maxRunLines)}, lines[len(lines)-maxRunLines:]...)
	}
	return strings.Join(lines, "\n") + fmt.Sprintf("\n\nIn all: %d in / %d out tokens, $%.2f.\n", in, out, cost)
}
