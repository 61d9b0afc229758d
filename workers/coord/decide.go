package coord

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// waiting is what a decision acts on: the plan, its inbox lease and its
// latest proposal.
type waiting struct {
	rel   string
	lease *model.Lease
	n     int
}

// findWaiting finds slug's plan whose proposal waits for approval; the
// caller holds the slug's lock.
func findWaiting(t *planfs.Tree, slug string) (waiting, error) {
	hits, err := t.FindSlug(slug, model.InProgress)
	if err != nil {
		return waiting{}, err
	}
	if len(hits) != 1 {
		return waiting{}, fmt.Errorf("%s: %w (not in in-progress/)", slug, ErrNotWaiting)
	}
	w := waiting{rel: hits[0], lease: t.ReadLease(hits[0])}
	if w.lease == nil || w.lease.Corrupt != "" || w.lease.Awaiting != model.AwaitApproval {
		what := "not held by the inbox"
		if w.lease != nil && w.lease.AwaitingText() != "" {
			what = w.lease.AwaitingText()
		}
		return waiting{}, fmt.Errorf("%s: %w (%s)", slug, ErrNotWaiting, what)
	}
	if w.n, err = latestN(t.Project, slug); err != nil {
		return waiting{}, err
	}
	if w.n == 0 {
		return waiting{}, fmt.Errorf("%s: %w (no proposal in %s)", slug, ErrNotWaiting, ProposalDir(t.Project, slug))
	}
	return w, nil
}

// authored checks that proposal w.n is the text w's agent's plan turn
// wrote: a record by that agent, and the file still matching it. It returns
// the text and its record.
func authored(t *planfs.Tree, slug string, w waiting) ([]byte, *Record, error) {
	rec, err := readRecord(t.Project, slug, w.n)
	if err != nil {
		return nil, nil, err
	}
	path := filepath.Join(ProposalDir(t.Project, slug), proposalName(w.n))
	switch {
	case rec == nil:
		return nil, nil, fmt.Errorf("%s: proposal %d has no authorship record: no plan turn of %s wrote it", path, w.n, w.lease.AgentID)
	case rec.AgentID != w.lease.AgentID || rec.N != w.n || rec.Slug != slug:
		return nil, nil, fmt.Errorf("%s: its record names %s (proposal %d of %s), not this plan's agent %s", path, rec.AgentID, rec.N, rec.Slug, w.lease.AgentID)
	}
	text, err := readProposalText(t.Project, slug, w.n)
	if err != nil {
		return nil, nil, err
	}
	if sum(text) != rec.SHA256 {
		return nil, nil, fmt.Errorf("%s: changed since %s wrote it (run %s); its sha256 no longer matches the record", path, rec.AgentID, rec.RunID)
	}
	return text, rec, nil
}

// Approve approves slug's waiting proposal as by. edited, when not nil, is
// the approver's text in place of the proposal's (approve --edit), recorded
// as theirs. The plan's agent's next run builds it.
func Approve(t *planfs.Tree, slug string, by Approver, edited []byte) (Decision, error) {
	if err := refuseViewer(t, slug, by); err != nil {
		return Decision{}, err
	}
	unlock, err := lockSlug(t.Project, slug)
	if err != nil {
		return Decision{}, err
	}
	defer unlock()
	w, err := findWaiting(t, slug)
	if err != nil {
		return Decision{}, err
	}
	text, rec, err := authored(t, slug, w)
	if err != nil {
		return Decision{}, err
	}
	if by.AgentID == rec.AgentID {
		return Decision{}, fmt.Errorf("%s: %s wrote proposal %d and cannot approve it (no self-approval)", slug, by.AgentID, w.n)
	}
	dir := ProposalDir(t.Project, slug)
	d := Decision{Slug: slug, N: w.n, Verdict: Approved, By: by.AgentID, At: time.Now().UTC(),
		SHA256: rec.SHA256, Text: filepath.Join(dir, proposalName(w.n))}
	if edited != nil {
		if len(edited) == 0 || len(edited) > MaxProposal {
			return Decision{}, fmt.Errorf("%s: the edited text must be 1 byte to %d bytes, not %d", slug, MaxProposal, len(edited))
		}
		if err := writeFile(t.Project, slug, approvedName(w.n), edited); err != nil {
			return Decision{}, err
		}
		text, d.Edited, d.SHA256 = edited, true, sum(edited)
		d.Text = filepath.Join(dir, approvedName(w.n))
	}
	scope, _, _ := model.ParseScope(string(text))
	d.Scope = scope.Patterns
	reason := fmt.Sprintf("proposal %d of %s approved", w.n, rec.AgentID)
	if d.Edited {
		reason += ", as edited by " + by.AgentID
	}
	return d, decide(t, w, d, reason)
}

// Reject sends slug's waiting proposal back with note; the agent's next run
// plans again with the note as FLEET_FEEDBACK.
func Reject(t *planfs.Tree, slug, note string, by Approver) (Decision, error) {
	if err := refuseViewer(t, slug, by); err != nil {
		return Decision{}, err
	}
	if strings.TrimSpace(note) == "" {
		return Decision{}, errors.New("a rejection needs a note saying what to change")
	}
	unlock, err := lockSlug(t.Project, slug)
	if err != nil {
		return Decision{}, err
	}
	defer unlock()
	w, err := findWaiting(t, slug)
	if err != nil {
		return Decision{}, err
	}
	body := strings.TrimRight(note, "\n") + "\n"
	if err := writeFile(t.Project, slug, feedbackName(w.n), []byte(body)); err != nil {
		return Decision{}, err
	}
	d := Decision{Slug: slug, N: w.n, Verdict: Rejected, By: by.AgentID, At: time.Now().UTC(), Note: note,
		Feedback: filepath.Join(ProposalDir(t.Project, slug), feedbackName(w.n))}
	return d, decide(t, w, d, fmt.Sprintf("proposal %d rejected: %s", w.n, firstLine(note)))
}

// decide writes d, hands the lease from the inbox to its agent's resume and
// logs the decision; a lease that cannot be marked takes the decision back.
func decide(t *planfs.Tree, w waiting, d Decision, reason string) error {
	prev, _ := readFile(t.Project, d.Slug, decisionName, 64<<10)
	if err := writeJSON(t.Project, d.Slug, decisionName, d); err != nil {
		return err
	}
	if err := t.MarkResume(w.rel, planfs.Agent(d.By)); err != nil {
		if prev != nil {
			_ = writeFile(t.Project, d.Slug, decisionName, prev)
		} else {
			_ = os.Remove(filepath.Join(ProposalDir(t.Project, d.Slug), decisionName))
		}
		return err
	}
	t.LogEvent(planfs.Event{Event: d.Verdict, Slug: d.Slug, From: w.rel, To: w.rel, AgentID: d.By, Reason: reason})
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
