package coord

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// Inbox lists what waits for the coordinator, oldest first: every plan
// whose lease the inbox holds. A decided plan waiting for its agent is
// listed too, with its Decision. Under a watcher (the UI, serve's hub) the
// tree is read again only where it changed, not in full on every refresh.
func Inbox(t *planfs.Tree) ([]Entry, error) {
	snap, err := t.Rescan()
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", t.Plans, err)
	}
	titles := make(map[string]string, len(snap.Plans))
	for i := range snap.Plans {
		titles[snap.Plans[i].Rel] = snap.Plans[i].Header.Title
	}
	var out []Entry
	for i := range snap.Leases {
		l := snap.Leases[i]
		if l.Corrupt != "" || l.Awaiting == "" || model.Rel(l.Rel).Lane() != model.InProgress {
			continue
		}
		if _, ok := titles[l.Rel]; !ok {
			continue
		}
		out = append(out, entryFor(t, l, titles[l.Rel]))
	}
	sort.SliceStable(out, func(i, j int) bool { return since(out[i]) < since(out[j]) })
	return out, nil
}

// since is when an entry started waiting, in Unix seconds.
func since(e Entry) float64 {
	if e.Record != nil {
		return float64(e.Record.At.UnixNano()) / 1e9
	}
	return e.Lease.ClaimedAt
}

// entryFor builds the inbox entry of an inbox-held lease; what cannot be
// read goes into Problem, never an error: one broken entry must not hide
// the others.
func entryFor(t *planfs.Tree, l model.Lease, title string) Entry {
	slug := model.SlugOf(model.Rel(l.Rel).Name())
	e := Entry{Slug: slug, Rel: l.Rel, Title: title, Lease: &l}
	n, err := latestN(t.Project, slug)
	if err != nil || n == 0 {
		e.Problem = "no proposal found"
		if err != nil {
			e.Problem = err.Error()
		}
		return e
	}
	e.N = n
	e.Proposal = filepath.Join(ProposalDir(t.Project, slug), proposalName(n))
	e.Record, _ = readRecord(t.Project, slug, n)
	if l.Awaiting == model.AwaitResume {
		e.Decision, _ = readDecision(t.Project, slug)
	}
	text, _, aerr := authored(t, slug, waiting{rel: l.Rel, lease: &l, n: n})
	if aerr != nil {
		e.Problem = aerr.Error()
		text, _ = readProposalText(t.Project, slug, n)
	}
	switch {
	case e.Decision != nil && e.Decision.Verdict == Approved:
		// What was approved (an edit, perhaps) is the scope now.
		e.Scope, e.ScopeFound = model.Scope{Patterns: e.Decision.Scope}, true
	case text != nil:
		e.Scope, e.ScopeFound, _ = model.ParseScope(string(text))
	}
	return e
}

// maxShown bounds what ReadProposal returns to a face.
const maxShown = 256 << 10

// ReadProposal reads an entry's proposal text, bounded, for a face.
func ReadProposal(e Entry) (text string, truncated bool, err error) {
	if e.Proposal == "" {
		return "", false, fmt.Errorf("%s: no proposal", e.Slug)
	}
	project := projectOf(e.Proposal)
	data, err := readProposalText(project, e.Slug, e.N)
	if err != nil {
		return "", false, err
	}
	if len(data) > maxShown {
		return string(data[:maxShown]), true, nil
	}
	return string(data), false, nil
}

// projectOf undoes ProposalDir for a proposal's path.
func projectOf(proposal string) string {
	dir := filepath.Dir(proposal) // …/var/fleet/run/proposals/<slug>
	for range 5 {
		dir = filepath.Dir(dir)
	}
	return dir
}
