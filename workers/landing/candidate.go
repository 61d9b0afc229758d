package landing

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// A candidate is review-needed/<slug>.md with branch feature/<slug> ahead
// of the integration branch. Everything about it is derived from git when
// read: its tip, its merge base, how far ahead and behind, and the tree
// merging it would give (or the paths that conflict). What git says for a
// pair (integration tip, branch tip) never changes, so it is cached in
// var/fleet/queue/cache.json; a warm read makes no git call per candidate.

// derived is what git says about one branch tip against one integration tip.
type derived struct {
	Base      string   `json:"base"`
	Ahead     int      `json:"ahead"`
	Behind    int      `json:"behind"`
	Tree      string   `json:"tree"` // the merge's tree; "" when it conflicts
	Conflicts []string `json:"conflicts,omitempty"`
	// Touched are the paths the branch changes since the merge base;
	// Listed says they were asked (an older cache entry was not).
	Touched []string `json:"touched,omitempty"`
	Listed  bool     `json:"listed"`
	// Built is the candidate commit a lander built for the pair, so a
	// listing shows a batch's chain without building it; a lander never
	// reads it.
	Built string `json:"built,omitempty"`
}

// derive asks git about tip against onto (the integration tip, or a
// candidate ahead of it in the queue).
func derive(project, onto, tip string) (derived, error) {
	var d derived
	base, err := git(project, "merge-base", onto, tip)
	if err != nil {
		return d, fmt.Errorf("%s has no common history with the integration branch: %v", short(tip), err)
	}
	d.Base = base
	counts, err := git(project, "rev-list", "--left-right", "--count", onto+"..."+tip)
	if err != nil {
		return d, err
	}
	if f := strings.Fields(counts); len(f) == 2 {
		d.Behind, _ = strconv.Atoi(f[0])
		d.Ahead, _ = strconv.Atoi(f[1])
	}
	names, err := git(project, "diff", "--name-only", "-z", "--no-renames", base, tip)
	if err != nil {
		return d, err
	}
	d.Touched, d.Listed = strings.FieldsFunc(names, func(r rune) bool { return r == 0 }), true
	// Exit 1 is "conflicts", listed after the tree's id.
	r, err := gitenv.Run(context.Background(), gitenv.Call{Dir: project, Args: []string{"merge-tree", "--write-tree", "--name-only", "--no-messages", onto, tip}})
	if err != nil && r.Code != 1 {
		return d, err
	}
	lines := strings.Split(r.Text(), "\n")
	if r.Code == 0 {
		d.Tree = lines[0]
		return d, nil
	}
	seen := map[string]bool{}
	for _, p := range lines[1:] {
		if p != "" && !seen[p] {
			seen[p] = true
			d.Conflicts = append(d.Conflicts, p)
		}
	}
	if len(d.Conflicts) == 0 {
		return d, err
	}
	return d, nil
}

// candCache is cache.json: derived by "onto tip" pairs.
type candCache struct {
	mu      sync.Mutex
	project string
	entries map[string]derived
	changed bool
	// noReads makes every get ask git (and correct the entry): a landing
	// builds what it lands itself, so a forged entry can skip no work and
	// supply no content.
	noReads bool
}

const cacheFile = queueDir + "/cache.json"

func loadCache(project string) *candCache {
	c := &candCache{project: project, entries: map[string]derived{}}
	f, err := safepath.OpenFile(project, cacheFile, os.O_RDONLY, 0)
	if err != nil {
		return c
	}
	defer f.Close()
	_ = json.NewDecoder(f).Decode(&c.entries) // a bad cache is only slow
	if c.entries == nil {
		c.entries = map[string]derived{}
	}
	return c
}

// get is derive through the cache.
func (c *candCache) get(onto, tip string) (derived, error) {
	key := onto + " " + tip
	c.mu.Lock()
	d, ok := c.entries[key]
	c.mu.Unlock()
	if ok && d.Listed && !c.noReads {
		return d, nil
	}
	d, err := derive(c.project, onto, tip)
	if err != nil {
		return d, err
	}
	c.mu.Lock()
	if old, ok := c.entries[key]; ok && old.Tree == d.Tree {
		d.Built = old.Built
	}
	c.entries[key] = d
	c.changed = true
	c.mu.Unlock()
	return d, nil
}

// built records the commit made for the pair onto, tip.
func (c *candCache) built(onto, tip, commit string) {
	key := onto + " " + tip
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.entries[key]; ok && d.Built != commit {
		d.Built = commit
		c.entries[key] = d
		c.changed = true
	}
}

// save writes the cache when it learnt something, keeping only pairs on
// the current integration tip (older ones can never be asked again).
func (c *candCache) save(integrationTip string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.changed {
		return
	}
	keep := map[string]derived{}
	for k, d := range c.entries {
		if strings.HasPrefix(k, integrationTip+" ") {
			keep[k] = d
		}
	}
	// And the pairs of a batch's chain, each onto the commit built before.
	for grew := true; grew; {
		grew = false
		for _, d := range keep {
			if d.Built == "" {
				continue
			}
			for k2, d2 := range c.entries {
				if _, ok := keep[k2]; !ok && strings.HasPrefix(k2, d.Built+" ") {
					keep[k2], grew = d2, true
				}
			}
		}
	}
	data, err := json.Marshal(keep)
	if err != nil {
		return
	}
	dir, err := safepath.OpenDir(c.project, queueDir, true)
	if err != nil {
		return
	}
	defer dir.Close()
	_ = atomicfile.WriteAt(dir, "cache.json", data, 0o644)
	c.changed = false
}

// repo is one read of the repository: the integration branch and every
// feature branch's tip, each from one git call.
type repo struct {
	project     string
	integration string
	tip         string            // the integration branch's tip
	tips        map[string]string // feature branch name -> tip
	landed      map[string]string // slug -> refs/fleetwatch/landed/<slug>
	// settings are the working tree's, but for Checks, which are the
	// integration branch's committed ones (see committed.go).
	settings config.Settings
	// drift is the notice when the working tree declares other checks.
	drift       string
	cache       *candCache
	authorsOnce sync.Once
	authors     map[string]string // slug -> author, read once (see author)
}

// Integration is the project's integration branch: fleetwatch.yaml's
// `integration:`, else dev, else develop, whichever exists (landing never
// creates one).
func Integration(project string, s config.Settings) (string, error) {
	names := []string{"dev", "develop"}
	if b := cmp.Or(s.Integration, s.Forge.Base); b != "" {
		names = []string{b}
	}
	// One git call for every name: a face asks at each refresh.
	args := []string{"for-each-ref", "--format=%(objecttype) %(refname)"}
	for _, n := range names {
		args = append(args, "refs/heads/"+n)
	}
	out, _ := git(project, args...)
	commits := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if ref, ok := strings.CutPrefix(line, "commit "); ok {
			commits[ref] = true
		}
	}
	for _, n := range names {
		if commits["refs/heads/"+n] {
			return n, nil
		}
	}
	// Not the project's path: every face already says which project it is.
	return "", fmt.Errorf("%w (%s); name one with integration: in %s", errNoIntegration, strings.Join(names, " or "), config.File)
}

// errNoIntegration is Integration's answer when no branch fits.
var errNoIntegration = errors.New("no integration branch")

func readRepo(project string) (*repo, error) {
	s, err := config.Load(project)
	if err != nil {
		return nil, err
	}
	r := &repo{project: project, settings: s, tips: map[string]string{}, landed: map[string]string{}}
	if r.integration, err = Integration(project, s); err != nil {
		return nil, err
	}
	refs, err := git(project, "for-each-ref", "--format=%(objectname) %(refname)",
		"refs/heads/"+r.integration, "refs/heads/feature/", "refs/heads/feat/", "refs/fleetwatch/landed/")
	if err != nil {
		return nil, err
	}
	committed, err := committedSettings(project, r.integration)
	if err != nil {
		return nil, err
	}
	r.drift = checksDrift(s, committed, r.integration)
	r.settings.Checks = committed.Checks
	for _, line := range strings.Split(refs, "\n") {
		oid, ref, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		switch {
		case ref == "refs/heads/"+r.integration:
			r.tip = oid
		case strings.HasPrefix(ref, "refs/fleetwatch/landed/"):
			r.landed[strings.TrimPrefix(ref, "refs/fleetwatch/landed/")] = oid
		default:
			r.tips[strings.TrimPrefix(ref, "refs/heads/")] = oid
		}
	}
	r.cache = loadCache(project)
	return r, nil
}

// buildCommit makes the candidate commit: tree with parents onto and tip,
// touching no worktree and no ref.
// Its dates are the later of its parents', so building it again gives the
// same commit: a rerun after a crash, or the head's real candidate after a
// speculative one, is the very commit already built.
func buildCommit(project, onto, tip, tree, slug, title string) (string, error) {
	msg := fmt.Sprintf("Land %s: %s\n\nfleetwatch queue land: %s at %s.", slug, title, model.FeatureBranch(slug), tip)
	dates, err := git(project, "show", "-s", "--format=%ct", onto, tip)
	if err != nil {
		return "", err
	}
	latest := 0
	for _, d := range strings.Fields(dates) {
		if n, err := strconv.Atoi(d); err == nil && n > latest {
			latest = n
		}
	}
	when := fmt.Sprintf("@%d +0000", latest)
	env := append(identity(project), "GIT_AUTHOR_DATE="+when, "GIT_COMMITTER_DATE="+when)
	return gitWith(env, project, "commit-tree", tree, "-p", onto, "-p", tip, "-m", msg)
}

// planTitle is the plan's `# ` heading, else the slug.
func planTitle(t *planfs.Tree, rel, slug string) string {
	text, _, err := t.ReadPlan(rel)
	if err == nil {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "# ") {
				return strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, "# "), "Plan:"))
			}
		}
	}
	return slug
}
