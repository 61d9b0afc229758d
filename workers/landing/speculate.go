package landing

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/fleetwatch/fleetwatch/planfs"
)

// Speculative checking (`queue: {depth: N}`): while the head is checked,
// the entries behind it are checked on the candidates they would have if
// the ones ahead land: the head's candidate, the next merged onto it, and
// so on. Results are keyed by tree, so when the head lands the next
// entry's real candidate has the tree already checked and lands at once.
// Entries already passing on their chained tree cost nothing and do not
// count against N; an entry that conflicts on the chain is left out of it.
// A failure at one place cancels the runs behind it, which were built on
// it, and they are rebuilt without it and run again.

// link is one entry on the speculative chain.
type link struct {
	slug, tip string
	commit    string // its chained candidate
	tree      string
	run       bool // its checks are not all pass yet
}

// speculation is the background checking of the entries behind the head.
type speculation struct {
	stop context.CancelFunc
	done chan struct{}
}

func (s *speculation) cancel() {
	if s != nil {
		s.stop()
	}
}

// wait lets the runs finish: their results are what the next landing
// reuses.
func (s *speculation) wait() {
	if s != nil {
		<-s.done
	}
}

// speculate starts checking up to depth-1 entries behind head on the chain
// from cand; nil when the depth is 1.
func speculate(ctx context.Context, t *planfs.Tree, r *repo, entries []Entry, head, cand string, log io.Writer) *speculation {
	depth := r.settings.QueueDepth
	if depth <= 1 || len(r.settings.Checks) == 0 {
		return nil
	}
	behind := landableBehind(t, r, entries, head)
	ctx, stop := context.WithCancel(ctx)
	s := &speculation{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer stop()
		onto := cand
		for round := 0; round < depth && len(behind) > 0 && ctx.Err() == nil; round++ {
			chain := buildChain(t, r, onto, behind, depth-1)
			failed := runChain(ctx, r, chain, log)
			if failed < 0 {
				return
			}
			// Rebuild what was behind the failure without it.
			onto = cand
			if failed > 0 {
				onto = chain[failed-1].commit
			}
			behind = withoutFailed(behind, chain, failed)
		}
	}()
	return s
}

// landableBehind are the entries queued behind head that could land: in
// review, with a branch and a fresh approval.
func landableBehind(t *planfs.Tree, r *repo, entries []Entry, head string) []link {
	var behind []link
	seen := false
	for _, e := range entries {
		if e.Slug == head {
			seen = true
			continue
		}
		if !seen || !inReview(t, e.Slug) {
			continue
		}
		st := r.status(t, e.Slug, reviewRel(e.Slug), 2)
		if st.Commit == "" || st.Approval == nil || st.Approval.Stale {
			continue // it cannot land; nothing behind it assumes it does
		}
		behind = append(behind, link{slug: e.Slug, tip: st.Commit})
	}
	return behind
}

// withoutFailed is behind less the chain's links up to and including the
// one at failed, which passed or failed this round.
func withoutFailed(behind, chain []link, failed int) []link {
	rest := []link{}
	for _, l := range behind {
		if position := indexOf(chain, l.slug); position < 0 || position > failed {
			rest = append(rest, link{slug: l.slug, tip: l.tip})
		}
	}
	return rest
}

func indexOf(chain []link, slug string) int {
	for i, l := range chain {
		if l.slug == slug {
			return i
		}
	}
	return -1
}

// buildChain merges each entry onto the one ahead, up to want entries that
// need checks; a conflicting entry is left out.
func buildChain(t *planfs.Tree, r *repo, onto string, behind []link, want int) []link {
	var chain []link
	for _, l := range behind {
		if want == 0 {
			break
		}
		d, err := r.cache.get(onto, l.tip)
		if err != nil || d.Tree == "" {
			continue
		}
		commit, err := buildCommit(r.project, onto, l.tip, d.Tree, l.slug, planTitle(t, reviewRel(l.slug), l.slug))
		if err != nil {
			continue
		}
		l.commit, l.tree = commit, d.Tree
		l.run = !allPass(CachedChecks(r.project, r.settings.Checks, d.Tree))
		if l.run {
			want--
		}
		chain = append(chain, l)
		onto = commit
	}
	return chain
}

// runChain checks the chain's links in parallel and returns the first
// place that did not pass, -1 when all did; a failure cancels the runs
// behind it.
func runChain(ctx context.Context, r *repo, chain []link, log io.Writer) int {
	ctxs := make([]context.Context, len(chain))
	stops := make([]context.CancelFunc, len(chain))
	for i := range chain {
		ctxs[i], stops[i] = context.WithCancel(ctx)
		defer stops[i]()
	}
	var mu sync.Mutex
	failed := -1
	var wg sync.WaitGroup
	for i, l := range chain {
		if !l.run {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(log, "checking %s ahead of its turn on %s\n", l.slug, short(l.commit))
			res, err := RunChecks(ctxs[i], r.project, r.settings.Checks, l.commit, io.Discard)
			if ctxs[i].Err() != nil {
				return // cancelled: a failure ahead, or the landing stopped
			}
			if err == nil && allPass(res) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if failed < 0 || i < failed {
				failed = i
				for j := i + 1; j < len(chain); j++ {
					stops[j]()
				}
			}
		}()
	}
	wg.Wait()
	return failed
}
