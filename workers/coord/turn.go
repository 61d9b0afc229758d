package coord

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// Turn is which turn a plan-first plan's run takes: a plan turn (Plan set)
// writing proposal N to Proposal, with Feedback the last rejection's note
// when there is one; or a build of the approved text at ApprovedPlan.
type Turn struct {
	Plan         bool
	N            int
	Proposal     string
	Feedback     string
	ApprovedPlan string
	Decision     *Decision
}

// approved reads the text proposal n's approval d approved, checked
// against the sha256 it recorded; name is its file in the slug's folder.
func approved(project, slug string, n int, d *Decision) (name string, text []byte, err error) {
	name = proposalName(n)
	if d.Edited {
		name = approvedName(n)
	}
	if text, err = readFile(project, slug, name, MaxProposal); err != nil {
		return name, nil, fmt.Errorf("approved plan: %v", err)
	}
	if sum(text) != d.SHA256 {
		return name, nil, fmt.Errorf("approved plan %s changed since %s approved it", filepath.Join(ProposalDir(project, slug), name), d.By)
	}
	return name, text, nil
}

// ApprovedText is the text slug's builds follow when its latest proposal
// is approved, "" when there is none. Unlike NextTurn it creates nothing:
// a listing reads it.
func ApprovedText(project, slug string) (string, error) {
	n, err := latestN(project, slug)
	if err != nil || n == 0 {
		return "", err
	}
	d, err := readDecision(project, slug)
	if err != nil || d == nil || d.Verdict != Approved || d.N != n {
		return "", err
	}
	_, text, err := approved(project, slug, n, d)
	return string(text), err
}

// NextTurn decides slug's next turn from its files: the latest proposal
// approved means a build of the approved text (checked against the sha256
// the approval recorded); rejected, or never decided, means a plan turn
// writing the next proposal.
func NextTurn(project, slug string) (Turn, error) {
	n, err := latestN(project, slug)
	if err != nil {
		return Turn{}, err
	}
	d, err := readDecision(project, slug)
	if err != nil {
		return Turn{}, err
	}
	if d != nil && d.Verdict == Approved && d.N == n && n > 0 {
		name, _, err := approved(project, slug, n, d)
		if err != nil {
			return Turn{}, err
		}
		return Turn{N: n, ApprovedPlan: filepath.Join(ProposalDir(project, slug), name), Decision: d}, nil
	}
	path, next, err := NextProposal(project, slug)
	if err != nil {
		return Turn{}, err
	}
	tu := Turn{Plan: true, N: next, Proposal: path, Decision: d}
	if d != nil && d.Verdict == Rejected {
		tu.Feedback = filepath.Join(ProposalDir(project, slug), feedbackName(d.N))
	}
	return tu, nil
}

// MarkResumed notes in the decision that a run took it up.
func MarkResumed(project, slug string) error {
	unlock, err := lockSlug(project, slug)
	if err != nil {
		return err
	}
	defer unlock()
	d, err := readDecision(project, slug)
	if err != nil || d == nil || d.Resumed {
		return err
	}
	d.Resumed = true
	return writeJSON(project, slug, decisionName, d)
}

// Resumable is a decided plan a --run worker w may take up, and whether
// that is a takeover: w's own decided plans first; else one whose agent is
// gone (decided more than ttl seconds ago and no live driver of that agent,
// as running says; coord cannot ask workers itself) and that w is fit for
// (model.Decide's fit, unless opt.NoFitCheck). ok is false when none.
func Resumable(t *planfs.Tree, snap *model.Snapshot, w model.Worker, opt model.Options, ttl float64, running func(agentID string) bool) (rel string, takeOver, ok bool) {
	var own, gone []string
	fit := map[string]bool{}
	for _, r := range model.Decide(snap, w, opt) {
		fit[r.Plan.Rel] = opt.NoFitCheck || r.Fit.Eligible()
	}
	now := time.Unix(0, int64(opt.Now*1e9))
	for i := range snap.Leases {
		l := &snap.Leases[i]
		switch {
		case !awaitsResume(l):
		case l.AgentID == w.AgentID:
			own = append(own, l.Rel)
		case fit[l.Rel] && abandoned(t, l, now, ttl, running):
			gone = append(gone, l.Rel)
		}
	}
	sort.Strings(own)
	sort.Strings(gone)
	switch {
	case len(own) > 0:
		return own[0], false, true
	case len(gone) > 0:
		return gone[0], true, true
	}
	return "", false, false
}

// awaitsResume reports whether l is a readable in-progress lease whose
// plan was decided and waits for its run to resume.
func awaitsResume(l *model.Lease) bool {
	return l.Corrupt == "" && l.Awaiting == model.AwaitResume && model.Rel(l.Rel).Lane() == model.InProgress
}

// abandoned reports whether l's decided plan has lost its agent: decided
// more than ttl seconds before now, with no live driver of that agent.
func abandoned(t *planfs.Tree, l *model.Lease, now time.Time, ttl float64, running func(agentID string) bool) bool {
	d, err := readDecision(t.Project, model.SlugOf(model.Rel(l.Rel).Name()))
	return err == nil && d != nil && now.Sub(d.At).Seconds() > ttl && !running(l.AgentID)
}
