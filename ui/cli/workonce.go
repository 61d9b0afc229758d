package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
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

	stopGrace time.Duration
	portRange string
	ports     look.PortRange

	unfixed []model.Warning // scan problems repair could not fix
	// needBranch: this worker makes each plan's feature branch
	// (--ensure-worktree, or --run in a git repo), so it skips plans whose
	// branch name git refuses.
	needBranch bool
	// claims is --claims; fs tells which flags were given (a remote
	// backend's default --lease-ttl is claims.DefaultTTL).
	claims string
	fs     *pflag.FlagSet
}

func workOnceCmd() *cobra.Command {
	return leaf("work-once", "claim (or list) the next plan this worker is fit for", func(fs *pflag.FlagSet) body {
		var w workOnce
		w.register(fs, defaultAgentID(), true)
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
		fs.DurationVar(&w.stopGrace, "stop-grace", workers.DefaultGrace, "with --run: how long a stopped agent gets between SIGTERM and SIGKILL")
		portRangeFlag(fs, &w.portRange, "ports to give agents from, LO-HI")
		fs.Bool("print-only", false, "accepted for anchor compatibility; does nothing")
		fs.StringVar(&w.claims, "claims", "", claimsFlagHelp)
		w.fs = fs
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 0 {
				return fail(stderr, exitError, "work-once: unexpected argument %q", pos[0])
			}
			return w.exec(stdout, stderr)
		}
	})
}

func (w *workOnce) exec(stdout, stderr io.Writer) int {
	if err := w.checkFlags(); err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	if code, asked := w.viaDriver(stdout, stderr); asked {
		return code
	}
	t, err := w.open()
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	if code, remote := w.remoteExec(t, stdout, stderr); remote {
		return code
	}
	w.settleNeedBranch(t)
	if code, done := w.doVerb(t, stdout, stderr); done {
		return code
	}
	worker, ep, err := w.worker(t)
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	if w.list {
		return w.doList(t, worker, ep, stdout, stderr)
	}
	// Before any change: a symlinked write path refuses the run, one line
	// naming it, and nothing is claimed.
	if err := t.CheckWrites(); err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	if err := look.CheckWrites(t.Project, worker.AgentID); err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	ctx, stop := stopContext()
	defer stop()
	return w.workLoop(ctx, t, worker, ep, nil, stdout, stderr)
}

// settleNeedBranch says whether a claim needs its branch: with
// --ensure-worktree, and with --run in a git project.
func (w *workOnce) settleNeedBranch(t *planfs.Tree) {
	if w.ensureWT {
		w.needBranch = true
	} else if w.run {
		_, gitErr := tree.Project(t.Project)
		w.needBranch = gitErr == nil
	}
}

// doVerb runs the verb a flag asks for instead of a claim (release,
// heartbeat, recover, park or return); done is false when none does.
func (w *workOnce) doVerb(t *planfs.Tree, stdout, stderr io.Writer) (code int, done bool) {
	switch {
	case w.release != "":
		return w.doRelease(t, stdout, stderr), true
	case w.heartbeat != "":
		return w.doHeartbeat(t, stdout, stderr), true
	case w.recover:
		return w.doRecover(t, stdout, stderr), true
	case w.park != "" || w.returnReady:
		return w.doParkOrReturn(t, stdout, stderr), true
	}
	return 0, false
}

// checkFlags refuses flags that cannot go together or hold bad values,
// before the tree is opened.
func (w *workOnce) checkFlags() error {
	switch {
	case w.maxPlans < 1:
		return fmt.Errorf("--max-plans must be at least 1, not %d", w.maxPlans)
	case planfs.ValidTTL(w.ttl) != nil:
		return fmt.Errorf("--lease-ttl: %v", planfs.ValidTTL(w.ttl))
	case w.jsonOut && !w.list:
		return errors.New("--json needs --list")
	case w.slug != "" && w.path != "":
		return errors.New("give --slug or --path, not both")
	case w.stopGrace <= 0:
		return fmt.Errorf("--stop-grace must be positive, not %v", w.stopGrace)
	case w.run && w.list:
		return errors.New("--run cannot be combined with --list")
	}
	return w.checkValues()
}

// checkValues refuses a bad port range, lane or slug.
func (w *workOnce) checkValues() error {
	var err error
	if w.ports, err = look.ParsePortRange(w.portRange); err != nil {
		return fmt.Errorf("--port-range: %v", err)
	}
	if w.park != "" {
		if _, err := target(w.park, "park", model.Park); err != nil {
			return err
		}
	}
	if w.targetLane != "" {
		if _, err := target(w.targetLane, "target-lane", model.Return); err != nil {
			return err
		}
	}
	if w.slug != "" {
		if err := planfs.ValidSlug(w.slug); err != nil {
			return fmt.Errorf("--slug: %v", err)
		}
	}
	return nil
}

// doList prints what this worker would see, claiming nothing and writing
// nothing: what the next claim would repair is shown, and ranked as if done.
func (w *workOnce) doList(t *planfs.Tree, worker model.Worker, ep registry.Endpoint, stdout, stderr io.Writer) int {
	sayContainment(t.Project, stderr)
	snap, err := t.Scan()
	if err != nil {
		return fail(stderr, exitError, "cannot read %s: %v", t.Plans, err)
	}
	snap, found := t.Preview(snap)
	found.Unfixed = append(found.Unfixed, look.BoardProblems(t.Project)...)
	found.Unfixed = append(found.Unfixed, look.CapWarnings(t.Project, snap.Leases, t.NowSeconds())...)
	for _, n := range append(found.Will, found.Unfixed...) {
		say(stderr, "warning: %s: %s", n.File, n.Message)
	}
	w.unfixed = found.Unfixed
	opt := w.options(t, ep)
	rows := model.Decide(snap, worker, opt)
	if w.jsonOut {
		return printListJSON(stdout, stderr, snap, w.unfixed, rows, worker, opt.Now)
	}
	printListTSV(stdout, stderr, snap, rows, worker, opt)
	sayCaps(stderr, t.Project, worker, ep, snap.Leases, opt.Now)
	return exitOK
}

// options are the pick's options --list shows: with --ensure-worktree,
// plans whose names the worktree backend refuses are skipped, and plans
// too big for the endpoint's max_context, as such a worker skips them.
func (w *workOnce) options(t *planfs.Tree, ep registry.Endpoint) model.Options {
	return model.Options{NoFitCheck: w.noFit, NoDepCheck: w.noDeps, NeedBranch: w.needBranch,
		Now: t.NowSeconds(), History: t.History(), Refuse: workers.SetupRefusal(t.Project, w.agent, w.ensureWT, ep)}
}

// workLoop is the one work loop (workers.WorkOnce) for worker on ep, over
// c's claims backend, or the tree's lease files when c is nil.
func (w *workOnce) workLoop(ctx context.Context, t *planfs.Tree, worker model.Worker, ep registry.Endpoint, c *claimsRun, stdout, stderr io.Writer) int {
	lp := &workers.WorkOnce{Tree: t, Worker: worker, Endpoint: ep, TTL: w.ttl, MaxPlans: w.maxPlans,
		Slug: w.slug, Path: w.path, Token: w.token, AllowAssigned: w.allowAssigned, NoFit: w.noFit, NoDeps: w.noDeps,
		Run: w.run, EnsureWorktree: w.ensureWT, NeedBranch: w.needBranch,
		RegistryPath: w.registryPath(t), RegistryGiven: w.registry != "", Ports: w.ports,
		NewDriver: func(argv []string) (*workers.Driver, error) { return w.newDriver(t, worker, ep, argv) },
		Stdout:    stdout, Say: func(format string, args ...any) { say(stderr, format, args...) }}
	if w.run && isTerminal(stderr) {
		lp.Echo = stderr
	}
	if c != nil {
		lp.Claims, lp.Where, lp.Remote = c.b, c.where, c.remote
	}
	switch lp.Do(ctx) {
	case workers.StatusOK:
		return exitOK
	case workers.StatusNothing:
		return exitNothing
	}
	return exitError
}

func (w *workOnce) registryPath(t *planfs.Tree) string {
	if w.registry != "" {
		return w.registry
	}
	return registry.Path(t.Project)
}

// stopContext ends when the driver is told to stop (SIGTERM, SIGINT,
// SIGHUP), or whoever read its output has gone (SIGPIPE, which would
// otherwise kill it between a claim and the release), with the signal's
// name as its cause.
func stopContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	go func() {
		select {
		case sig := <-ch:
			cancel(errors.New(unix.SignalName(sig.(syscall.Signal))))
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// worker settles who is asking. The model name is --model or the endpoint's
// model, never the agent id (anchor's agent id `a` matched every model name).
func (w *workOnce) worker(t *planfs.Tree) (model.Worker, registry.Endpoint, error) {
	tierWord, modelName := w.tier, w.modelName
	var ep registry.Endpoint
	if w.endpoint != "" {
		reg, err := registry.Load(w.registryPath(t))
		if err != nil {
			return model.Worker{}, ep, err
		}
		if ep, err = reg.Lookup(w.endpoint); err != nil {
			return model.Worker{}, ep, err
		}
		if tierWord == "" {
			tierWord = ep.Tier
			if _, err := model.ParseTier(tierWord); err != nil {
				return model.Worker{}, ep, fmt.Errorf("%s:%d: endpoint %s: %v", reg.Path, ep.TierLine, ep.Name, err)
			}
		}
		if modelName == "" {
			modelName = ep.Model
		}
	} else if w.registry != "" {
		return model.Worker{}, ep, errors.New("--registry needs --endpoint")
	}
	if tierWord == "" {
		tierWord = "mid"
	}
	tier, err := model.ParseTier(tierWord)
	if err != nil {
		return model.Worker{}, ep, fmt.Errorf("--tier: %v", err)
	}
	if strings.TrimSpace(w.agent) == "" {
		return model.Worker{}, ep, errors.New("--agent-id must not be empty")
	}
	return model.Worker{AgentID: w.agent, Tier: tier, Model: modelName}, ep, nil
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
	return resolvePlan(t, arg, model.RuleOf(model.Release).Lookup()...)
}

func (w *workOnce) doRelease(t *planfs.Tree, stdout, stderr io.Writer) int {
	rel, err := w.relArg(t, w.release)
	if err != nil {
		return fail(stderr, exitError, "--release: %v", err)
	}
	dst, err := t.Release(rel, w.actor())
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
	if _, err := t.Renew(rel, w.actor(), w.ttl); err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	fmt.Fprintln(stdout, rel)
	return exitOK
}

func (w *workOnce) doRecover(t *planfs.Tree, stdout, stderr io.Writer) int {
	rel, err := w.target(t, model.RuleOf(model.Recover).From...)
	if err != nil {
		return fail(stderr, missingCode(err), "--recover: %v", err)
	}
	if _, err := proc.Recover(t, rel, w.actor(), w.ttl); err != nil {
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
	rel, err := w.target(t, model.FromAny(model.Park, model.Return)...)
	if err != nil {
		return fail(stderr, missingCode(err), "%s: %v", verb, err)
	}
	var dst string
	if w.park != "" {
		dst, err = t.Park(rel, model.Lane(w.park), w.actor().Because(""))
	} else {
		dst, err = t.Return(rel, model.Lane(w.targetLane), w.actor())
	}
	if err != nil {
		return fail(stderr, exitError, "%v%s", err, forceHint(err))
	}
	fmt.Fprintln(stdout, t.Abs(dst))
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
func printListTSV(stdout, stderr io.Writer, snap *model.Snapshot, rows []model.Row, w model.Worker, opt model.Options) {
	out, others := model.OwnClaims(rows, w.AgentID, opt.Now)
	// Own claims by name, as anchor lists them; ready plans stay in pick order.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Plan.Name < out[j].Plan.Name })
	for _, r := range rows {
		if r.Plan.Lane.Ready() {
			out = append(out, r)
		}
	}
	printListRows(stdout, out, opt.Now)
	// anchor's columns have no room for a reason: say on stderr why a ready
	// plan is never claimed.
	var stuck []string
	for _, r := range rows {
		if r.Problem != "" && r.Plan.Lane.Ready() {
			stuck = append(stuck, termtext.Line(fmt.Sprintf("#   %s  %s", r.Plan.Rel, r.Problem)))
		}
	}
	printListNote(stderr, "# cannot be claimed (skipped):", stuck)
	printListNote(stderr, "# skipped by this worker:", wontTake(rows))
	var foreign []string
	for _, r := range others {
		owner := "none"
		if r.Lease != nil {
			owner = r.Lease.AgentID + awaitingSuffix(r.Lease, "  ") + workers.HeldOn(r.Lease, "  ")
		}
		foreign = append(foreign, termtext.Line(fmt.Sprintf("#   %s  agent=%s", r.Plan.Rel, owner)))
	}
	printListNote(stderr, "# in-progress (other agents — ignore):", foreign)
	var active []string
	for _, l := range snap.Leases {
		if l.Active(opt.Now) {
			active = append(active, termtext.Line(fmt.Sprintf("#   %s  agent=%s%s", l.Rel, l.AgentID, awaitingSuffix(&l, "  "))))
		}
	}
	sort.Strings(active)
	printListNote(stderr, "# active leases:", active)
}

// wontTake says of each ready plan the table lists that this worker's
// bare pick skips it, and why (overqualified, leased, deps unmet): the fit
// column alone read as if an overqualified plan were on offer. Plans no
// claim can take are the note above's.
func wontTake(rows []model.Row) []string {
	var out []string
	for _, r := range rows {
		if r.Plan.Lane.Ready() && !r.Eligible && r.Problem == "" {
			out = append(out, termtext.Line(fmt.Sprintf("#   %s  will not take: %s", r.Plan.Rel, r.Reason)))
		}
	}
	return out
}

// printListRows is the --list table itself, one TSV row a plan, or one
// line saying there is none.
func printListRows(stdout io.Writer, rows []model.Row, nowS float64) {
	if len(rows) == 0 {
		fmt.Fprintln(stdout, "(no ready plans under bugs/ or features/; no owned in-progress)")
		return
	}
	fmt.Fprintln(stdout, "path\tlane\tpriority\tvalue\tpreferred\tfit\tdeps\tassignee\towner")
	for _, r := range rows {
		h := r.Plan.Header
		pref := h.PreferredRaw
		if pref == "" {
			pref = "-"
		}
		owner := "-"
		if r.Lease != nil && r.Lease.Blocks(nowS) {
			owner = r.Lease.AgentID + awaitingSuffix(r.Lease, " ") + workers.HeldOn(r.Lease, " ")
			if r.Lease.Corrupt != "" {
				owner = "(corrupt lease)"
			}
		}
		cells := []string{r.Plan.Rel, string(r.Plan.Lane), h.Priority, h.Value, pref, string(r.Fit),
			depsCell(h, r.Deps), assigneeCell(h), owner}
		for i, c := range cells {
			cells[i] = tsvSafe(c)
		}
		fmt.Fprintln(stdout, strings.Join(cells, "\t"))
	}
}

// printListNote prints one of --list's notes on stderr: its heading, then
// its lines; nothing when it has none.
func printListNote(stderr io.Writer, heading string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(stderr, heading)
	for _, l := range lines {
		fmt.Fprintln(stderr, l)
	}
}

// tsvSafe makes a cell safe for a TSV row and a terminal: a tab or line
// break in a file name becomes a space, other controls `?`.
func tsvSafe(s string) string { return termtext.Line(s) }

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
	// Awaiting is an inbox-held lease's state (approval, resume), and
	// AwaitingText its words ("awaiting approval").
	Awaiting     string `json:"awaiting,omitempty"`
	AwaitingText string `json:"awaiting_text,omitempty"`
	// Backend and HeldOn are a remote lease's claims backend and the host
	// that holds it (git, etcd); a lease file has neither.
	Backend string `json:"backend,omitempty"`
	HeldOn  string `json:"held_on,omitempty"`
}

// awaitingSuffix is " (awaiting approval)" for an inbox-held lease, after
// sep; "" for any other.
func awaitingSuffix(l *model.Lease, sep string) string {
	if txt := l.AwaitingText(); txt != "" {
		return sep + "(" + txt + ")"
	}
	return ""
}

func printListJSON(stdout, stderr io.Writer, snap *model.Snapshot, unfixed []model.Warning, rows []model.Row, w model.Worker, nowS float64) int {
	return writeJSON(stdout, stderr, buildListJSON(snap, unfixed, rows, w, nowS))
}

// writeJSON prints v as one JSON object, as --list --json does.
func writeJSON(stdout, stderr io.Writer, v any) int {
	if err := encodeJSON(stdout, v, ""); err != nil {
		return fail(stderr, exitError, "writing JSON: %v", err)
	}
	return exitOK
}

// encodeJSON prints v as JSON (indented by indent, if any) with the
// controls a terminal obeys escaped: every --json output passes text from
// plans, leases and logs, which must not rewrite the reader's terminal.
func encodeJSON(w io.Writer, v any, indent string) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termtext.JSON(buf.Bytes()))
	return err
}

func buildListJSON(snap *model.Snapshot, unfixed []model.Warning, rows []model.Row, w model.Worker, nowS float64) listJSON {
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
			p.Lease = &leaseJSON{AgentID: l.AgentID, ClaimedAt: l.ClaimedAt, ExpiresAt: l.ExpiresAt, Expired: l.Corrupt == "" && !l.Active(nowS), Corrupt: l.Corrupt,
				Awaiting: l.Awaiting, AwaitingText: l.AwaitingText()}
			if l.Backend != "" {
				p.Lease.Backend, p.Lease.HeldOn = l.Backend, l.Host
			}
		}
		out.Plans = append(out.Plans, p)
	}
	return out
}
