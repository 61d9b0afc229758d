package ledger

import (
	"slices"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs"
)

// Result claims, as a run's `## Result` section states them (anchor's
// words): what the agent said of its own work.
const (
	ClaimSuccess     = "success"
	ClaimShouldWork  = "should-work"
	ClaimBlocked     = "blocked"
	ClaimUnspecified = ""
)

// ParseResult reads the claim of a `## Result` section in text: the first
// of success, should-work (or "should work") and blocked its first
// non-empty line names; "" when there is no such section or it names none.
func ParseResult(text string) string {
	_, after, ok := strings.Cut("\n"+text, "\n## Result")
	if !ok {
		return ClaimUnspecified
	}
	_, after, _ = strings.Cut(after, "\n")
	for line := range strings.Lines(after) {
		l := strings.ToLower(strings.TrimSpace(line))
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "#") {
			return ClaimUnspecified
		}
		l = strings.ReplaceAll(l, "should work", ClaimShouldWork)
		best, at := ClaimUnspecified, len(l)+1
		for _, w := range []string{ClaimSuccess, ClaimShouldWork, ClaimBlocked} {
			if i := strings.Index(l, w); i >= 0 && i < at {
				best, at = w, i
			}
		}
		return best
	}
	return ClaimUnspecified
}

// planFacts is what happened to one plan after its runs, from the event
// log: the verdicts, checks, approval, landing and send-backs.
type planFacts struct {
	reachedReview   bool
	needsWork       int // peer verdicts other than ACCEPT
	firstCheck      string
	firstCheckAt    time.Time
	approved        bool
	landedAt        time.Time
	sentBack        int
	scopeViolations int
}

// factsOf reads the event log into each plan's facts. A "checks" event's
// reason starts with pass or fail (the lander writes fail); a landing
// with no failure before it passed its first checks.
func factsOf(events []planfs.Event) map[string]*planFacts {
	out := map[string]*planFacts{}
	for _, e := range events {
		if e.Slug == "" {
			continue
		}
		f := out[e.Slug]
		if f == nil {
			f = &planFacts{}
			out[e.Slug] = f
		}
		f.add(e)
	}
	return out
}

// add takes in one event of the plan's.
func (f *planFacts) add(e planfs.Event) {
	switch e.Event {
	case "complete":
		f.reachedReview = f.reachedReview || strings.HasPrefix(e.To, "review-needed/")
	case "review":
		if !strings.HasPrefix(e.Reason, "ACCEPT") {
			f.needsWork++
		}
	case "checks":
		if f.firstCheck == "" {
			f.firstCheck, _, _ = strings.Cut(e.Reason, ":")
			f.firstCheckAt, _ = time.Parse(time.RFC3339Nano, e.TS)
		}
	case "approve":
		f.approved = true
	case "land":
		f.landedAt, _ = time.Parse(time.RFC3339Nano, e.TS)
		if f.firstCheck == "" {
			// Landed with no failed checks before: passed the first time.
			f.firstCheck = "pass"
		}
	case "needs-work":
		f.sentBack++
	case "scope-violation":
		f.scopeViolations++
	}
}

// Line is one group of `fleetwatch report`: what its runs cost and what
// their plans delivered.
type Line struct {
	Key             string  `json:"key"`
	Runs            int     `json:"runs"`
	Plans           int     `json:"plans"`
	Landed          int     `json:"landed"`
	Tokens          int64   `json:"tokens"`
	CostUSD         float64 `json:"cost_usd"`
	CostPerLanded   float64 `json:"cost_per_landed_usd"`   // 0 when nothing landed
	TokensPerLanded int64   `json:"tokens_per_landed"`     // 0 when nothing landed
	FirstCheckPass  float64 `json:"first_check_pass_rate"` // of plans whose checks ran
	Checked         int     `json:"checked"`
	NeedsWorkRate   float64 `json:"needs_work_rate"` // of plans that reached review
	SendBackRate    float64 `json:"send_back_rate"`
	Reviewed        int     `json:"reviewed"`
	ScopeViolations int     `json:"scope_violations"`
	MedianToLand    float64 `json:"median_seconds_to_land"` // first run's start to the landing
	SaidDoneFailed  int     `json:"said_done_checks_failed"`
}

// Outcomes groups runs by one key (tier, endpoint or model) beside what
// their plans delivered, from the event log, as the runs are read: a plan
// counts for the group of its last build before it landed (or its last
// build); its runs' spend counts for each run's own group.
type Outcomes struct {
	by    string
	facts map[string]*planFacts
	lines map[string]*Line
	plans map[string]*planRuns
}

type planRuns struct {
	last, latest Run // the last build before the plan landed; the last of all
	first        time.Time
}

// NewOutcomes reads events into each plan's facts, for runs grouped by by.
func NewOutcomes(events []planfs.Event, by string) *Outcomes {
	return &Outcomes{by: by, facts: factsOf(events), lines: map[string]*Line{}, plans: map[string]*planRuns{}}
}

func (o *Outcomes) line(k string) *Line {
	if o.lines[k] == nil {
		o.lines[k] = &Line{Key: k}
	}
	return o.lines[k]
}

// Add counts one run.
func (o *Outcomes) Add(r Run) {
	l := o.line(KeyOf(r, o.by))
	l.Runs++
	l.Tokens += r.Tokens()
	l.CostUSD += r.CostUSD
	p := o.plans[r.Plan]
	if p == nil {
		p = &planRuns{first: r.Start}
		o.plans[r.Plan] = p
	}
	if f := o.facts[r.Plan]; f == nil || f.landedAt.IsZero() || !r.Start.After(f.landedAt) {
		p.last = r
	}
	p.latest = r
	p.first = minTime(p.first, r.Start)
}

// Lines are the groups, by key.
func (o *Outcomes) Lines() []Line {
	toLand := map[string][]float64{}
	for slug, p := range o.plans {
		if p.last.ID == "" {
			p.last = p.latest
		}
		k := KeyOf(p.last, o.by)
		l := o.line(k)
		l.Plans++
		if f := o.facts[slug]; f != nil {
			l.count(f, p.last.Claim == ClaimSuccess || p.last.Claim == ClaimShouldWork)
			if !f.landedAt.IsZero() {
				toLand[k] = append(toLand[k], f.landedAt.Sub(p.first).Seconds())
			}
		}
	}
	out := make([]Line, 0, len(o.lines))
	for _, l := range o.lines {
		c := *l
		c.finish(toLand[c.Key])
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Line) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// count adds one plan's facts to l; saidDone is its last build's claim.
func (l *Line) count(f *planFacts, saidDone bool) {
	l.ScopeViolations += f.scopeViolations
	if f.reachedReview || f.needsWork > 0 || f.sentBack > 0 {
		l.Reviewed++
		l.NeedsWorkRate += b2f(f.needsWork > 0)
		l.SendBackRate += b2f(f.sentBack > 0)
	}
	if f.firstCheck != "" {
		l.Checked++
		l.FirstCheckPass += b2f(f.firstCheck == "pass")
		if f.firstCheck == "fail" && saidDone {
			l.SaidDoneFailed++
		}
	}
	if !f.landedAt.IsZero() {
		l.Landed++
	}
}

func (l *Line) finish(toLand []float64) {
	if l.Landed > 0 {
		l.CostPerLanded = l.CostUSD / float64(l.Landed)
		l.TokensPerLanded = l.Tokens / int64(l.Landed)
	}
	if l.Checked > 0 {
		l.FirstCheckPass /= float64(l.Checked)
	}
	if l.Reviewed > 0 {
		l.NeedsWorkRate /= float64(l.Reviewed)
		l.SendBackRate /= float64(l.Reviewed)
	}
	if n := len(toLand); n > 0 {
		slices.Sort(toLand)
		l.MedianToLand = toLand[n/2]
		if n%2 == 0 {
			l.MedianToLand = (toLand[n/2-1] + toLand[n/2]) / 2
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
