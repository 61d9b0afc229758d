package landing

import (
	"github.com/fleetwatch/fleetwatch/planfs"
)

// BatchView is the batch the next landing checks (`queue: {batch: N}`):
// which changes ride together, on what candidate, its checks, and, when it
// failed, how far the bisection has come. It is worked out on each read
// from the queue, git and the stored check results, as the lander would.
type BatchView struct {
	Slugs     []string      `json:"slugs"`     // in landing order
	Candidate string        `json:"candidate"` // the chain's last commit
	Tree      string        `json:"tree"`
	Checks    []CheckResult `json:"checks"`
	// Retried says a failure of the batch was run again as is.
	Retried bool `json:"retried"`
	// Bisection is set once the batch failed: its prefixes' results.
	Bisection *Bisection `json:"bisection,omitempty"`
}

// Bisection is what the stored results say of a failed batch's prefixes
// (the first k changes of it, k from 1).
type Bisection struct {
	Passing int    `json:"passing"` // the longest prefix known to pass, 0 when none
	Failing int    `json:"failing"` // the shortest prefix known to fail
	Running []int  `json:"running"` // prefixes being checked now
	Culprit string `json:"culprit"` // set when Failing is Passing+1
}

// batchView is l's next batch, nil when batching is off or nothing can
// ride. Links already built are taken from the cache (a landing records
// the commits it built), so a warm read makes no git call.
func batchView(t *planfs.Tree, r *repo, items []Status) *BatchView {
	if r.settings.QueueBatch <= 1 || len(r.settings.Checks) == 0 {
		return nil
	}
	chain := batchChain(t, r, items)
	if len(chain) == 0 {
		return nil
	}
	last := chain[len(chain)-1]
	v := &BatchView{Candidate: last.commit, Tree: last.tree, Checks: CachedChecks(r.project, r.settings.Checks, last.tree)}
	for _, l := range chain {
		v.Slugs = append(v.Slugs, l.slug)
	}
	v.Retried = retried(r, last.tree)
	if failedChecks(v.Checks) || v.Retried {
		v.Bisection = bisection(r, chain)
	}
	return v
}

// batchChain links the queued entries that may ride together, in queue
// order, up to the batch size: each one ready or checking, waiting on no
// entry held back, its link built (or cached) onto the one before.
func batchChain(t *planfs.Tree, r *repo, items []Status) []link {
	var chain []link
	held := map[string]bool{}
	onto := r.tip
	for _, st := range items {
		if st.Position == nil || len(chain) == r.settings.QueueBatch {
			continue
		}
		ok := st.State == Queued || st.State == Checking || st.State == Ready
		if !ok || waitsOn(t, st.Slug, held) != nil {
			held[st.Slug] = true
			continue
		}
		l, err := r.cachedLink(t, onto, st.Slug, st.Commit)
		if err != nil {
			held[st.Slug] = true
			continue
		}
		chain = append(chain, l)
		onto = l.commit
	}
	return chain
}

// cachedLink is chainLink through the cache's record of the commit built
// for the pair.
func (r *repo) cachedLink(t *planfs.Tree, onto, slug, tip string) (link, error) {
	d, err := r.cache.get(onto, tip)
	if err == nil && d.Built != "" && d.Tree != "" {
		return link{slug: slug, tip: tip, commit: d.Built, tree: d.Tree}, nil
	}
	return chainLink(t, r, onto, slug, tip)
}

// failedChecks says a check has a settled verdict other than pass.
func failedChecks(res []CheckResult) bool {
	for _, c := range res {
		switch c.Result {
		case Fail, Error, Timeout:
			return true
		}
	}
	return false
}

// retried says a check on tree has a failed attempt set aside.
func retried(r *repo, tree string) bool {
	for _, c := range r.settings.Checks {
		f := filesOf(r.project, tree, c)
		if _, ok := readRecordAs(r.project, f, retryExt+".json", c, tree); ok {
			return true
		}
	}
	return false
}

// bisection reads the chain's prefixes' stored results.
func bisection(r *repo, chain []link) *Bisection {
	b := &Bisection{Failing: len(chain), Running: []int{}}
	for i, l := range chain[:len(chain)-1] {
		res := CachedChecks(r.project, r.settings.Checks, l.tree)
		switch {
		case failedChecks(res):
			b.Failing = min(b.Failing, i+1)
		case allPass(res):
			if i+1 < b.Failing {
				b.Passing = max(b.Passing, i+1)
			}
		default:
			for _, c := range res {
				if c.Result == Running {
					b.Running = append(b.Running, i+1)
					break
				}
			}
		}
	}
	if b.Failing == b.Passing+1 {
		b.Culprit = chain[b.Passing].slug
	}
	return b
}
