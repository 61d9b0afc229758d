package model

import (
	"slices"
	"strconv"
	"strings"
)

// NoticeKind says what a notice is about. Notices are one list: later
// faces (the coordinator's inbox, the merge queue) add kinds here.
type NoticeKind string

const (
	// NoticeReview: a plan reached review-needed/ and waits for a person.
	NoticeReview NoticeKind = "review"
	// NoticeWorkerFailed: a worker exited with a non-zero code.
	NoticeWorkerFailed NoticeKind = "failed"
	// NoticeWorkerStale: a running worker stopped heartbeating.
	NoticeWorkerStale NoticeKind = "stale"
	// NoticeWorkerDead: a worker's file says running but its process is gone.
	NoticeWorkerDead NoticeKind = "dead"
	// NoticeLeaseExpired: a lease ran out and no live worker drives it.
	NoticeLeaseExpired NoticeKind = "expired"
	// NoticeProposal: a plan-first plan's proposal waits in the inbox for
	// the coordinator's approval.
	NoticeProposal NoticeKind = "proposal"
	// NoticeScopeViolation: a running build touched paths outside its
	// approved scope (or under .plans/).
	NoticeScopeViolation NoticeKind = "scope"
	// NoticeOverlap: two running workers touch the same paths.
	NoticeOverlap NoticeKind = "overlap"
	// NoticeGate: the landing gate itself is not as the queue left it (the
	// integration branch moved outside the queue, the working tree's
	// checks differ from the committed ones).
	NoticeGate NoticeKind = "gate"
	// NoticeLanding: a landing started from the cockpit was refused or
	// failed; the face adds it when the lander exits.
	NoticeLanding NoticeKind = "landing"
	// NoticeBudget: a run reached its budget and is paused until a person
	// extends it or stops it.
	NoticeBudget NoticeKind = "budget"
	// NoticeStuck: a claimed plan has had no commit on its branch (nor a
	// claim) for NoticeFacts.StuckAfter.
	NoticeStuck NoticeKind = "stuck"
	// NoticeEndpoint: an endpoint was disabled (its key or login refused)
	// or shut until its usage window resets.
	NoticeEndpoint NoticeKind = "endpoint"
	// NoticeAsking: a running conversation waits for a person's answer
	// to its agent's question or permission request ("waiting for input").
	NoticeAsking NoticeKind = "asking"
)

// NoticeKinds are every kind, in the order the docs list them.
var NoticeKinds = []NoticeKind{NoticeReview, NoticeProposal, NoticeAsking, NoticeBudget, NoticeWorkerFailed, NoticeWorkerStale,
	NoticeWorkerDead, NoticeLeaseExpired, NoticeScopeViolation, NoticeOverlap, NoticeGate, NoticeLanding, NoticeStuck, NoticeEndpoint}

// NoticeSubject is the kind of row a notice leads to; Notice.Key names the
// row: a plan rel, a lease file name, a worker's agent id.
type NoticeSubject int

const (
	SubjectPlan NoticeSubject = iota
	SubjectLease
	SubjectWorker
	// SubjectGate leads to the merge queue; Key is empty.
	SubjectGate
)

// Notice is one fact that needs a person.
type Notice struct {
	// ID is the same for the same fact on every look: a plan's rel, a
	// worker's run (agent and start), a lease's expiry. A fact that stays
	// true is never noticed twice.
	ID      string
	At      float64 // when it was noticed, Unix seconds
	Kind    NoticeKind
	Text    string // one line, raw: the face sanitizes it for its terminal
	Subject NoticeSubject
	Key     string
}

// WorkerFact is what the notices need of a worker: the words of
// look.Health, which model cannot import.
type WorkerFact struct {
	Agent  string
	Plan   string // the plan rel it works on, if any
	Health string // live, stale, dead or exited
	Exit   *int   // the exit code, once exited
	// Started and Heartbeat (Unix seconds) tell one run, and one silence,
	// from the next.
	Started, Heartbeat float64
	// Violations are the paths its build touched out of scope, sorted.
	Violations []string
	// Note is why it exited, in its driver's words.
	Note string
	// Paused says why its run is paused ("budget reached: …" at its
	// budget), since PausedAt (Unix seconds).
	Paused   string
	PausedAt float64
	// Asking is the question its run waits on a person for, AskID the
	// request's id (one notice per question) and AskedAt when it was
	// asked (Unix seconds); "" when it waits on none.
	Asking, AskID string
	AskedAt       float64
}

// LandingFact is a landing the lander refused or failed (its event in the
// log), at At (Unix seconds).
type LandingFact struct {
	Slug, Commit, Reason string
	At                   float64
}

// ProposalFact is a proposal waiting in the coordinator's inbox: proposal
// N of the plan at Rel, written by Agent.
type ProposalFact struct {
	Slug, Rel, Agent string
	N                int
}

// OverlapFact is two running workers (A < B) touching the same Paths, and
// whether git says their changes conflict (Checked false: not asked).
type OverlapFact struct {
	A, B              string
	Paths             []string
	Checked, Conflict bool
}

// NoticeFacts is one look at everything notices come from.
type NoticeFacts struct {
	Rows      []BoardRow
	Leases    []Lease
	Workers   []WorkerFact
	Proposals []ProposalFact
	Overlaps  []OverlapFact
	// Gate are the merge queue's own notices, one line each.
	Gate []string
	// Landings are the lander's refusals the event log holds; those older
	// than a day are not news.
	Landings []LandingFact
	// Commits is the time of the last commit on each branch (Unix
	// seconds), for telling a claimed plan's progress; StuckAfter is how
	// long without one (nor a claim) makes it stuck, 0 never.
	Commits    map[string]float64
	StuckAfter float64
	// Endpoints are the endpoints disabled or shut now.
	Endpoints []EndpointFact
	Now       float64
}

// EndpointFact is an endpoint a person must know is out: disabled until
// someone clears it, or shut until its window resets (Until, Unix
// seconds). Since tells one spell of trouble from the next.
type EndpointFact struct {
	Name, State, Reason string
	Since, Until        float64
}

// Conditions lists every notice that is true in f, stamped at f.Now, in a
// fixed order (the gate, landings, plans, proposals, leases, stuck plans,
// workers, questions, budgets, scope violations, overlaps). New ones are
// those whose ID the previous look did not have (NewNotices).
func Conditions(f NoticeFacts) []Notice {
	var out []Notice
	add := func(id string, k NoticeKind, text string, s NoticeSubject, key string) {
		out = append(out, Notice{ID: string(k) + ":" + id, At: f.Now, Kind: k, Text: text, Subject: s, Key: key})
	}
	for _, line := range f.Gate {
		add(line, NoticeGate, line, SubjectGate, "")
	}
	landings(f, add)
	reviews(f, add)
	proposals(f, add)
	expiredLeases(f, add)
	stuck(f, add)
	workerTrouble(f, add)
	asking(f, add)
	budgets(f, add)
	endpoints(f, add)
	scopeViolations(f, add)
	overlaps(f, add)
	return out
}

// landings adds a notice for each of the lander's refusals younger than
// landingNews.
func landings(f NoticeFacts, add adder) {
	for _, l := range f.Landings {
		if f.Now-l.At <= landingNews {
			add(l.Slug+"@"+l.Commit+"@"+secs(l.At), NoticeLanding, "landing "+l.Slug+orEmpty(" @ ", l.Commit[:min(7, len(l.Commit))])+
				" did not land: "+l.Reason, SubjectGate, "")
		}
	}
}

// reviews adds a notice for each plan waiting in review-needed.
func reviews(f NoticeFacts, add adder) {
	for i := range f.Rows {
		if p := f.Rows[i].Plan; p.Lane == ReviewNeeded {
			add(p.Rel, NoticeReview, p.Slug+" waits for review: "+titleOr(p), SubjectPlan, p.Rel)
		}
	}
}

// proposals adds a notice for each proposal waiting for approval.
func proposals(f NoticeFacts, add adder) {
	for _, p := range f.Proposals {
		add(p.Rel+"#"+strconv.Itoa(p.N), NoticeProposal, p.Slug+": "+p.Agent+"'s plan waits for approval", SubjectPlan, p.Rel)
	}
}

// expiredLeases adds a notice for each readable expired lease that no live
// worker drives, neither by its agent nor by its plan.
func expiredLeases(f NoticeFacts, add adder) {
	driven := map[string]bool{}
	for _, w := range f.Workers {
		if w.Health == "live" {
			driven["a\x00"+w.Agent], driven["p\x00"+w.Plan] = true, true
		}
	}
	for i := range f.Leases {
		l := &f.Leases[i]
		if l.Corrupt != "" || l.Active(f.Now) || driven["a\x00"+l.AgentID] || driven["p\x00"+l.Rel] {
			continue
		}
		add(l.File+"@"+secs(l.ExpiresAt), NoticeLeaseExpired, l.Rel+": "+l.AgentID+"'s lease expired and no worker drives it",
			SubjectLease, l.File)
	}
}

// workerTrouble adds a notice for each worker that failed, went stale or
// died.
func workerTrouble(f NoticeFacts, add adder) {
	for _, w := range f.Workers {
		// Whole seconds: a run started here is first known from the
		// process, then from its state file, which may differ by a hair.
		run := w.Agent + "@" + strconv.FormatInt(int64(w.Started), 10)
		on := ""
		if w.Plan != "" {
			on = " on " + w.Plan
		}
		switch {
		case w.Health == "exited" && w.Exit != nil && *w.Exit != 0:
			add(run, NoticeWorkerFailed, w.Agent+" exited "+strconv.Itoa(*w.Exit)+on+because(w.Note), SubjectWorker, w.Agent)
		case w.Health == "stale":
			add(run+"@"+strconv.FormatInt(int64(w.Heartbeat), 10), NoticeWorkerStale, w.Agent+" stopped heartbeating"+on, SubjectWorker, w.Agent)
		case w.Health == "dead":
			add(run, NoticeWorkerDead, w.Agent+"'s process is gone"+on, SubjectWorker, w.Agent)
		}
	}
}

// scopeViolations adds a notice for each live worker's paths out of scope.
func scopeViolations(f NoticeFacts, add adder) {
	for _, w := range f.Workers {
		if w.Health != "live" || len(w.Violations) == 0 {
			continue
		}
		// One notice per run and set of paths: a new path out of scope is
		// news, the same ones on the next look are not.
		run := w.Agent + "@" + strconv.FormatInt(int64(w.Started), 10)
		add(run+":"+strings.Join(w.Violations, ","), NoticeScopeViolation,
			w.Agent+" touched "+countPaths(len(w.Violations))+" out of scope"+onPlan(w.Plan)+": "+pathList(w.Violations), SubjectWorker, w.Agent)
	}
}

// overlaps adds a notice for each pair of workers touching the same paths,
// with what git says of their changes.
func overlaps(f NoticeFacts, add adder) {
	for _, o := range f.Overlaps {
		verdict := "not checked for conflicts"
		switch {
		case o.Checked && o.Conflict:
			verdict = "their changes conflict"
		case o.Checked:
			verdict = "their changes merge cleanly"
		}
		add(o.A+"+"+o.B+":"+strings.Join(o.Paths, ",")+":"+verdict, NoticeOverlap,
			o.A+" and "+o.B+" both touch "+pathList(o.Paths)+": "+verdict, SubjectWorker, o.A)
	}
}

// adder adds one notice of Conditions'.
type adder func(id string, k NoticeKind, text string, s NoticeSubject, key string)

// landingNews is how long a refused landing stays a notice: the event log
// keeps them for ever.
const landingNews = 24 * 3600

// stuck adds a notice for each claimed plan whose lease (held by an agent,
// not the inbox) is older than f.StuckAfter and whose branch has had no
// commit for as long. A new commit, then another silence, is a new notice.
func stuck(f NoticeFacts, add adder) {
	if f.StuckAfter <= 0 {
		return
	}
	for i := range f.Leases {
		l := &f.Leases[i]
		if !l.Active(f.Now) || l.Awaiting != "" || Rel(l.Rel).Lane() != InProgress {
			continue
		}
		since := max(l.ClaimedAt, f.Commits[FeatureBranch(Rel(l.Rel).Slug())])
		if f.Now-since < f.StuckAfter {
			continue
		}
		add(l.Rel+"@"+secs(since), NoticeStuck, l.Rel+": no commit from "+l.AgentID+" for "+hours(f.Now-since),
			SubjectPlan, l.Rel)
	}
}

// endpoints adds a notice for each endpoint disabled or shut: once per
// spell of trouble.
func endpoints(f NoticeFacts, add adder) {
	for _, e := range f.Endpoints {
		id := e.Name + "@" + e.State + "@" + strconv.FormatInt(int64(e.Since), 10)
		text := "endpoint " + e.Name + " is disabled: " + e.Reason + "; once fixed: fleetwatch endpoints clear " + e.Name
		if e.State != "disabled" {
			text = "endpoint " + e.Name + " is " + e.State + " for " + hours(e.Until-f.Now) + ": " + e.Reason + "; other endpoints take its plans"
		}
		add(id, NoticeEndpoint, text, SubjectGate, "")
	}
}

// asking adds a notice for each run waiting on a person's answer: once
// per question, however long it waits.
func asking(f NoticeFacts, add adder) {
	for _, w := range f.Workers {
		if (w.Health == "live" || w.Health == "stale") && w.Asking != "" {
			ask := w.AskID
			if ask == "" {
				ask = secs(w.AskedAt)
			}
			run := w.Agent + "@" + strconv.FormatInt(int64(w.Started), 10)
			add(run+"@"+ask, NoticeAsking, w.Agent+" waits for input"+onPlan(w.Plan)+": "+w.Asking+
				"; fleetwatch answer "+w.Agent+" …", SubjectWorker, w.Agent)
		}
	}
}

// budgets adds a notice for each run paused at its budget: one per run
// and pause.
func budgets(f NoticeFacts, add adder) {
	for _, w := range f.Workers {
		if (w.Health == "live" || w.Health == "stale") && strings.HasPrefix(w.Paused, "budget") {
			run := w.Agent + "@" + strconv.FormatInt(int64(w.Started), 10)
			add(run+"@"+strconv.FormatInt(int64(w.PausedAt), 10), NoticeBudget, w.Agent+" is paused"+onPlan(w.Plan)+": "+w.Paused, SubjectWorker, w.Agent)
		}
	}
}

// hours is a silence in words: "3h20m", "45m".
func hours(s float64) string {
	m := int64(s) / 60
	if m < 60 {
		return strconv.FormatInt(m, 10) + "m"
	}
	return strconv.FormatInt(m/60, 10) + "h" + strconv.FormatInt(m%60, 10) + "m"
}

// because is ": note", or nothing: a failed worker's notice says why when
// its driver said.
func because(note string) string {
	if note == "" {
		return ""
	}
	return ": " + note
}

func orEmpty(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

func onPlan(rel string) string {
	if rel == "" {
		return ""
	}
	return " on " + rel
}

func countPaths(n int) string {
	if n == 1 {
		return "1 path"
	}
	return strconv.Itoa(n) + " paths"
}

// pathList names the first few paths, and how many more there are.
func pathList(paths []string) string {
	const shown = 3
	s := strings.Join(paths[:min(shown, len(paths))], ", ")
	if len(paths) > shown {
		s += " and " + strconv.Itoa(len(paths)-shown) + " more"
	}
	return s
}

// NewNotices are the notices of cur that were not true in prev: what
// became true between two looks. The first look has no prev to compare
// with, so callers keep it as the baseline and notice nothing.
func NewNotices(prev, cur []Notice) []Notice {
	was := make(map[string]bool, len(prev))
	for _, n := range prev {
		was[n.ID] = true
	}
	return slices.DeleteFunc(slices.Clone(cur), func(n Notice) bool { return was[n.ID] })
}

func titleOr(p *Plan) string {
	if p.Header.Title != "" {
		return p.Header.Title
	}
	return p.Name
}

func secs(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }
