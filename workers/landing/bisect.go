package landing

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/fleetwatch/fleetwatch/planfs"
)

// bisectWidth is how many prefixes are checked at once in a bisection.
func bisectWidth() int { return max(3, runtime.NumCPU()) }

// bisect finds the first link whose prefix fails, knowing the whole chain
// does: several prefixes are checked at once (each link is its prefix's
// candidate), and the interval between the last passing and the first
// failing one narrows until they are neighbours. It returns how many
// links pass. When a round leaves room, the chains the next round would
// land (the rest, without each possible culprit) are checked meanwhile,
// so the landing after the bisection finds them checked.
func bisect(ctx context.Context, t *planfs.Tree, r *repo, chain []link, log io.Writer) (int, error) {
	lo, hi := 0, len(chain) // prefix lo passes (0: the integration tip), hi fails
	for hi-lo > 1 {
		points := spread(lo, hi, bisectWidth())
		fmt.Fprintf(log, "bisecting: %d of %d pass so far, checking %v\n", lo, len(chain), points)
		var rests []string
		if hi-lo <= bisectWidth()-len(points) {
			for k := lo + 1; k <= hi; k++ {
				if c := restChain(t, r, chain, k); c != "" {
					rests = append(rests, c)
				}
			}
		}
		pass, errs := checkAll(ctx, r, prefixCommits(chain, points), rests)
		for i, p := range points {
			if errs[i] != nil {
				return 0, errs[i]
			}
			if !pass[i] {
				hi = p
				break
			}
			lo = p
		}
		failpoint("bisect:round")
	}
	return lo, nil
}

func prefixCommits(chain []link, points []int) []string {
	out := make([]string, len(points))
	for i, p := range points {
		out[i] = chain[p-1].commit
	}
	return out
}

// checkAll checks commits and, alongside, extra (whose results are only
// stored), and says which of commits passed.
func checkAll(ctx context.Context, r *repo, commits, extra []string) ([]bool, []error) {
	pass := make([]bool, len(commits))
	errs := make([]error, len(commits))
	var wg sync.WaitGroup
	for i, c := range append(commits, extra...) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := RunChecks(ctx, r.project, r.settings.Checks, c, io.Discard)
			if i < len(commits) {
				pass[i], errs[i] = err == nil && allPass(res), err
			}
		}()
	}
	wg.Wait()
	return pass, errs
}

// restChain is the last commit of the chain without link k (1-based) on
// the prefix before it: what lands after the bisection if k is the
// culprit; "" when nothing follows k or a link conflicts.
func restChain(t *planfs.Tree, r *repo, chain []link, k int) string {
	onto := r.tip
	if k > 1 {
		onto = chain[k-2].commit
	}
	last := ""
	for _, l := range chain[k:] {
		next, err := chainLink(t, r, onto, l.slug, l.tip)
		if err != nil {
			return ""
		}
		onto, last = next.commit, next.commit
	}
	return last
}

// spread is up to n prefix lengths evenly inside (lo, hi).
func spread(lo, hi, n int) []int {
	inside := hi - lo - 1
	if inside <= n {
		n = inside
	}
	points := make([]int, 0, n)
	for i := 1; i <= n; i++ {
		p := lo + (i*(hi-lo)+n/2)/(n+1)
		if p > lo && p < hi && (len(points) == 0 || p > points[len(points)-1]) {
			points = append(points, p)
		}
	}
	return points
}
