package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/registry"
	"fleetwatch/workers"
)

type workOnce struct {
	common
	list, jsonOut                        bool
	maxPlans                             int
	tier, modelName, endpoint, registry  string
	ttl                                  float64
	noFit, noDeps, allowAssigned         bool
	slug, path                           string
	run, recover, returnReady, ensureWT  bool
	release, heartbeat, park, targetLane string
}

func runWorkOnce(args []string, stdout, stderr io.Writer) int {
	var w workOnce
	fs := newFlags("work-once")
	w.register(fs, true)
	fs.BoolVar(&w.list, "list", false, "print what this worker would see, claim nothing")
	fs.BoolVar(&w.jsonOut, "json", false, "with --list: one JSON object (the machine contract)")
	fs.Bool("once", false, "claim one plan (the default when not listing)")
	fs.IntVar(&w.maxPlans, "max-plans", 1, "claim up to N plans")
	fs.StringVar(&w.tier, "tier", "", "fit tier: small, mid, reasoner, frontier (or a registry tier); default mid")
	fs.StringVar(&w.modelName, "model", "", "model name, matched against Preferred models")
	fs.StringVar(&w.endpoint, "endpoint", "", "take tier and model from this endpoints.yaml entry")
	fs.StringVar(&w.registry, "registry", "", "endpoints.yaml (default: <root>/endpoints.yaml)")
	fs.Float64Var(&w.ttl, "lease-ttl", planfs.DefaultTTL, "lease time to live, seconds")
	fs.BoolVar(&w.noFit, "no-fit-check", false, "ignore Preferred models")
	fs.BoolVar(&w.noDeps, "no-dep-check", false, "ignore Depends on")
	fs.BoolVar(&w.allowAssigned, "allow-assigned", false, "a named --slug/--path may take a person's plan")
	fs.StringVar(&w.slug, "slug", "", "claim this plan by name")
	fs.StringVar(&w.path, "path", "", "claim this plan file")
	fs.BoolVar(&w.run, "run", false, "hand the claimed plan to the executor")
	fs.StringVar(&w.release, "release", "", "release the claim on REL (back to its origin lane)")
	fs.StringVar(&w.heartbeat, "heartbeat", "", "renew this agent's lease on REL")
	fs.BoolVar(&w.recover, "recover", false, "take over the --path/--slug plan whose lease expired")
	fs.StringVar(&w.park, "park", "", "park the --path/--slug plan in ambiguous or blocked")
	fs.BoolVar(&w.returnReady, "return-ready", false, "return the --path/--slug plan to a ready lane")
	fs.StringVar(&w.targetLane, "target-lane", "", "with --return-ready: bugs or features")
	fs.BoolVar(&w.ensureWT, "ensure-worktree", false, "create this agent's git worktree for the claim")
	fs.Bool("print-only", false, "accepted for anchor compatibility; does nothing")
	pos, code := parseFlags(fs, args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return fail(stderr, exitError, "work-once: unexpected argument %q", pos[0])
	}
	return w.exec(stdout, stderr)
}

func (w *workOnce) exec(stdout, stderr io.Writer) int {
	switch {
	case w.maxPlans < 1:
		return fail(stderr, exitError, "--max-plans must be at least 1, not %d", w.maxPlans)
	case planfs.ValidTTL(w.ttl) != nil:
		return fail(stderr, exitError, "--lease-ttl: %v", planfs.ValidTTL(w.ttl))
	case w.jsonOut && !w.list:
		return fail(stderr, exitError, "--json needs --list")
	case w.slug != "" && w.path != "":
		return fail(stderr, exitError, "give --slug or --path, not both")
	case w.run:
		return fail(stderr, exitError, "--run is not available yet: claim with --once and hand the printed path to your agent")
	}
	if w.park != "" {
		if _, err := lane(w.park, "park", model.Lane.Parked, "ambiguous or blocked"); err != nil {
			return fail(stderr, exitError, "%v", err)
		}
	}
	if w.targetLane != "" {
		if _, err := lane(w.targetLane, "target-lane", model.Lane.Ready, "bugs or features"); err != nil {
			return fail(stderr, exitError, "%v", err)
		}
	}
	if w.slug != "" {
		if err := planfs.ValidSlug(w.slug); err != nil {
			return fail(stderr, exitError, "--slug: %v", err)
		}
	}
	t, err := w.open()
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	switch {
	case w.release != "":
		return w.doRelease(t, stdout, stderr)
	case w.heartbeat != "":
		return w.doHeartbeat(t, stdout, stderr)
	case w.recover:
		return w.doRecover(t, stdout, stderr)
	case w.park != "" || w.returnReady:
		return w.doParkOrReturn(t, stdout, stderr)
	}
	worker, err := w.worker(t)
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	snap, err := t.Scan()
	if err != nil {
		return fail(stderr, exitError, "cannot read %s: %v", t.Plans, err)
	}
	repairs := t.Repair(snap)
	for _, n := range repairs.Unfixed {
		fmt.Fprintf(stderr, "fleetwatch: warning: %s: %s\n", n.File, n.Message)
	}
	if len(repairs.Fixed) > 0 {
		for _, n := range repairs.Fixed {
			fmt.Fprintln(stderr, "fleetwatch: repair: "+n)
		}
		if snap, err = t.Scan(); err != nil {
			return fail(stderr, exitError, "cannot read %s: %v", t.Plans, err)
		}
	}
	opt := model.Options{NoFitCheck: w.noFit, NoDepCheck: w.noDeps, Now: t.NowSeconds(), History: t.History()}
	if w.list {
		rows := model.Decide(snap, worker, opt)
		if w.jsonOut {
			return printListJSON(stdout, stderr, snap, repairs.Unfixed, rows, worker, opt.Now)
		}
		printListTSV(stdout, stderr, snap, rows, worker, opt.Now)
		return exitOK
	}
	if w.slug != "" || w.path != "" {
		return w.claimNamed(t, snap, worker, opt, stdout, stderr)
	}
	skip := map[string]bool{}
	claimed := 0
	for claimed < w.maxPlans {
		rel, err := t.ClaimNext(snap, worker, opt, w.ttl, skip)
		if err != nil {
			return fail(stderr, exitError, "%v", err)
		}
		if rel == "" {
			break
		}
		claimed++
		fmt.Fprintln(stdout, t.Abs(rel))
		if code := w.worktreeFor(t, rel, stdout, stderr); code != exitOK {
			return code
		}
	}
	if claimed == 0 {
		return exitNothing
	}
	return exitOK
}

// worker settles who is asking. The model name is --model or the endpoint's
// model, never the agent id (anchor's agent id `a` matched every model name).
func (w *workOnce) worker(t *planfs.Tree) (model.Worker, error) {
	tierWord, modelName := w.tier, w.modelName
	if w.endpoint != "" {
		regPath := w.registry
		if regPath == "" {
			regPath = filepath.Join(t.Project, "endpoints.yaml")
		}
		reg, err := registry.Load(regPath)
		if err != nil {
			return model.Worker{}, err
		}
		ep, err := reg.Lookup(w.endpoint)
		if err != nil {
			return model.Worker{}, err
		}
		if tierWord == "" {
			tierWord = ep.Tier
			if _, err := model.ParseTier(tierWord); err != nil {
				return model.Worker{}, fmt.Errorf("%s:%d: endpoint %s: %v", reg.Path, ep.TierLine, ep.Name, err)
			}
		}
		if modelName == "" {
			modelName = ep.Model
		}
	} else if w.registry != "" {
		return model.Worker{}, errors.New("--registry needs --endpoint")
	}
	if tierWord == "" {
		tierWord = "mid"
	}
	tier, err := model.ParseTier(tierWord)
	if err != nil {
		return model.Worker{}, fmt.Errorf("--tier: %v", err)
	}
	if strings.TrimSpace(w.agent) == "" {
		return model.Worker{}, errors.New("--agent-id must not be empty")
	}
	return model.Worker{AgentID: w.agent, Tier: tier, Model: modelName}, nil
}

// target resolves --slug/--path for the verbs that act on a named plan; a
// slug is looked up in lanes.
func (w *workOnce) target(t *planfs.Tree, lanes ...model.Lane) (string, error) {
	switch {
	case w.path != "":
		rel, err := resolvePlan(t, w.path)
		if err != nil {
			return "", fmt.Errorf("--path %w", err)
		}
		return rel, nil
	case w.slug != "":
		rel, err := resolvePlan(t, w.slug, lanes...)
		if err != nil {
			return "", fmt.Errorf("--slug: %w", err)
		}
		return rel, nil
	}
	return "", errors.New("needs --path or --slug")
}

func (w *workOnce) relArg(t *planfs.Tree, arg string) (string, error) {
	return resolvePlan(t, arg, model.InProgress, model.Bugs, model.Features)
}

func (w *workOnce) doRelease(t *planfs.Tree, stdout, stderr io.Writer) int {
	rel, err := w.relArg(t, w.release)
	if err != nil {
		return fail(stderr, exitError, "--release: %v", err)
	}
	dst, err := t.Release(rel, w.agent, w.force)
	switch {
	case errors.Is(err, planfs.ErrNoLease):
		fmt.Fprintln(stdout, "no lease "+rel)
		return exitOK
	case err != nil:
		return fail(stderr, exitError, "%v%s", err, forceHint(err))
	}
	fmt.Fprintf(stdout, "released %s\n", rel)
	if dst != rel {
		fmt.Fprintln(stdout, t.Abs(dst))
	}
	return exitOK
}

func (w *workOnce) doHeartbeat(t *planfs.Tree, stdout, stderr io.Writer) int {
	rel, err := w.relArg(t, w.heartbeat)
	if err != nil {
		return fail(stderr, exitError, "--heartbeat: %v", err)
	}
	if _, err := t.Renew(rel, w.agent, w.ttl); err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	fmt.Fprintln(stdout, rel)
	return exitOK
}

func (w *workOnce) doRecover(t *planfs.Tree, stdout, stderr io.Writer) int {
	rel, err := w.target(t, model.InProgress)
	if err != nil {
		return fail(stderr, missingCode(err), "--recover: %v", err)
	}
	if _, err := t.Recover(rel, w.agent, w.ttl); err != nil {
		if errors.Is(err, planfs.ErrNotFound) {
			return fail(stderr, exitNothing, "%v", err)
		}
		return fail(stderr, exitError, "%v", err)
	}
	fmt.Fprintln(stdout, t.Abs(rel))
	return exitOK
}

func (w *workOnce) doParkOrReturn(t *planfs.Tree, stdout, stderr io.Writer) int {
	verb := "--return-ready"
	if w.park != "" {
		verb = "--park"
	}
	rel, err := w.target(t, model.InProgress, model.Bugs, model.Features, model.Ambiguous, model.Blocked)
	if err != nil {
		return fail(stderr, missingCode(err), "%s: %v", verb, err)
	}
	var dst string
	if w.park != "" {
		dst, err = t.Park(rel, model.Lane(w.park), w.agent, "", w.force)
	} else {
		dst, err = t.Return(rel, model.Lane(w.targetLane), w.agent, w.force)
	}
	if err != nil {
		return fail(stderr, exitError, "%v%s", err, forceHint(err))
	}
	fmt.Fprintln(stdout, t.Abs(dst))
	return exitOK
}

// claimNamed claims (or resumes) the plan named by --slug or --path. Being
// refused a plan (a person's, unmet dependencies, lost to another worker) is
// exit 1, anything else exit 2.
func (w *workOnce) claimNamed(t *planfs.Tree, snap *model.Snapshot, worker model.Worker, opt model.Options, stdout, stderr io.Writer) int {
	var rel string
	var err error
	if w.path != "" {
		cwd, _ := os.Getwd()
		if rel, err = t.ResolvePath(w.path, cwd); err != nil {
			return fail(stderr, exitError, "--path %v", err)
		}
	} else if rel, err = planfs.ResolveNamed(snap, w.slug, worker.AgentID, opt.Now); err != nil {
		if errors.Is(err, planfs.ErrNotFound) {
			return fail(stderr, exitNothing, "--slug: %v", err)
		}
		return fail(stderr, exitError, "--slug: %v", err)
	}
	dst, warning, err := t.ClaimNamed(snap, rel, worker, opt, w.allowAssigned, w.ttl)
	switch {
	case errors.Is(err, planfs.ErrAssigned):
		return fail(stderr, exitNothing, "%v (--allow-assigned overrides)", err)
	case errors.Is(err, planfs.ErrDepsUnmet), errors.Is(err, planfs.ErrClaimed), errors.Is(err, planfs.ErrNotFound):
		return fail(stderr, exitNothing, "%v", err)
	case errors.Is(err, planfs.ErrNoLease):
		return fail(stderr, exitError, "%v (--recover takes it over)", err)
	case err != nil:
		return fail(stderr, exitError, "%v", err)
	}
	if warning != "" {
		fmt.Fprintln(stderr, "fleetwatch: warning: "+warning)
	}
	fmt.Fprintln(stdout, t.Abs(dst))
	return w.worktreeFor(t, dst, stdout, stderr)
}

// worktreeFor gives the agent its git worktree on the claimed plan's feature
// branch when --ensure-worktree asks for one, printing anchor's KEY=value
// lines. A failure is exit 2 and the plan stays claimed.
func (w *workOnce) worktreeFor(t *planfs.Tree, rel string, stdout, stderr io.Writer) int {
	if !w.ensureWT {
		return exitOK
	}
	wt, err := workers.Ensure(t.Project, w.agent, model.SlugOf(path.Base(rel)))
	if err != nil {
		return fail(stderr, exitError, "--ensure-worktree: %v (the plan stays claimed: %s)", err, rel)
	}
	fmt.Fprintf(stdout, "WORKTREE=%s\nBRANCH=%s\nINTEGRATION=%s\n", wt.Path, wt.Branch, wt.Integration)
	return exitOK
}

func depsCell(h model.Header, d model.DepStatus) string {
	if len(h.DependsOn) == 0 {
		return "none"
	}
	if d.Met {
		return "met:" + strings.Join(h.DependsOn, ",")
	}
	slugs := make([]string, len(d.Unmet))
	for i, u := range d.Unmet {
		slugs[i] = u.Slug
	}
	return "UNMET:" + strings.Join(slugs, ",")
}

func assigneeCell(h model.Header) string {
	if h.AgentAssignable {
		return "ai"
	}
	return h.Assignee
}

// printListTSV prints anchor's --list table: this agent's in-progress plans,
// then ready plans in pick order; other agents' claims go to stderr.
func printListTSV(stdout, stderr io.Writer, snap *model.Snapshot, rows []model.Row, w model.Worker, nowS float64) {
	out, others := model.OwnClaims(rows, w.AgentID, nowS)
	var foreign []string
	for _, r := range others {
		owner := "none"
		if r.Lease != nil {
			owner = r.Lease.AgentID
		}
		foreign = append(foreign, fmt.Sprintf("#   %s  agent=%s", r.Plan.Rel, owner))
	}
	// Own claims by name, as anchor lists them; ready plans stay in pick order.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Plan.Name < out[j].Plan.Name })
	for _, r := range rows {
		if r.Plan.Lane.Ready() {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		fmt.Fprintln(stdout, "(no ready plans under bugs/ or features/; no owned in-progress)")
	} else {
		fmt.Fprintln(stdout, "path\tlane\tpriority\tvalue\tpreferred\tfit\tdeps\tassignee\towner")
		for _, r := range out {
			h := r.Plan.Header
			pref := h.PreferredRaw
			if pref == "" {
				pref = "-"
			}
			owner := "-"
			if r.Lease != nil && r.Lease.Blocks(nowS) {
				owner = r.Lease.AgentID
				if r.Lease.Corrupt != "" {
					owner = "(corrupt lease)"
				}
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Plan.Rel, r.Plan.Lane, h.Priority, h.Value,
				tsvSafe(pref), r.Fit, tsvSafe(depsCell(h, r.Deps)), tsvSafe(assigneeCell(h)), tsvSafe(owner))
		}
	}
	if len(foreign) > 0 {
		fmt.Fprintln(stderr, "# in-progress (other agents — ignore):")
		for _, f := range foreign {
			fmt.Fprintln(stderr, f)
		}
	}
	var active []string
	for _, l := range snap.Leases {
		if l.Active(nowS) {
			active = append(active, fmt.Sprintf("#   %s  agent=%s", l.Rel, l.AgentID))
		}
	}
	if len(active) > 0 {
		sort.Strings(active)
		fmt.Fprintln(stderr, "# active leases:")
		for _, a := range active {
			fmt.Fprintln(stderr, a)
		}
	}
}

var tsvCell = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

func tsvSafe(s string) string { return tsvCell.Replace(s) }

type listJSON struct {
	Worker   workerJSON      `json:"worker"`
	Plans    []planJSON      `json:"plans"`
	Warnings []model.Warning `json:"warnings"`
}

type workerJSON struct {
	AgentID string `json:"agent_id"`
	Tier    string `json:"tier"`
	Model   string `json:"model"`
}

type planJSON struct {
	Rel             string          `json:"rel"`
	Slug            string          `json:"slug"`
	Lane            model.Lane      `json:"lane"`
	Title           string          `json:"title"`
	Priority        string          `json:"priority"`
	Value           string          `json:"value"`
	Preferred       []string        `json:"preferred"`
	Assignee        string          `json:"assignee"`
	AgentAssignable bool            `json:"agent_assignable"`
	Fit             model.Fit       `json:"fit"`
	Deps            model.DepStatus `json:"deps"`
	Lease           *leaseJSON      `json:"lease"`
	Eligible        bool            `json:"eligible"`
	Rank            *int            `json:"rank"`
	// Reason says why an ineligible plan is skipped ("" when eligible).
	Reason string `json:"reason"`
}

type leaseJSON struct {
	AgentID   string  `json:"agent_id"`
	ClaimedAt float64 `json:"claimed_at"`
	ExpiresAt float64 `json:"expires_at"`
	Expired   bool    `json:"expired"`
	Corrupt   string  `json:"corrupt,omitempty"`
}

func printListJSON(stdout, stderr io.Writer, snap *model.Snapshot, unfixed []model.Warning, rows []model.Row, w model.Worker, nowS float64) int {
	out := listJSON{
		Worker:   workerJSON{AgentID: w.AgentID, Tier: w.Tier.String(), Model: w.Model},
		Plans:    make([]planJSON, 0, len(rows)),
		Warnings: append(append([]model.Warning{}, snap.Warnings...), unfixed...),
	}
	for _, r := range rows {
		h := r.Plan.Header
		p := planJSON{
			Rel: r.Plan.Rel, Slug: r.Plan.Slug, Lane: r.Plan.Lane, Title: h.Title, Priority: h.Priority, Value: h.Value,
			Preferred: append([]string{}, h.Preferred...), Assignee: h.Assignee, AgentAssignable: h.AgentAssignable,
			Fit: r.Fit, Deps: r.Deps, Eligible: r.Eligible, Reason: r.Reason,
		}
		if p.Deps.Unmet == nil {
			p.Deps.Unmet = []model.Unmet{}
		}
		if r.Rank > 0 {
			rank := r.Rank
			p.Rank = &rank
		}
		if l := r.Lease; l != nil {
			p.Lease = &leaseJSON{AgentID: l.AgentID, ClaimedAt: l.ClaimedAt, ExpiresAt: l.ExpiresAt, Expired: l.Corrupt == "" && !l.Active(nowS), Corrupt: l.Corrupt}
		}
		out.Plans = append(out.Plans, p)
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return fail(stderr, exitError, "writing JSON: %v", err)
	}
	return exitOK
}
