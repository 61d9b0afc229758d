package landing

import (
	"fmt"
	"sort"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// orderEntries is the queue in landing order: hotfixes first, then P1
// plans, then the rest, each in queue order; an entry that has waited
// max_wait counts as P1, so it never waits longer behind newer, higher
// ones. An entry whose plan depends on a queued plan goes after it.
func orderEntries(t *planfs.Tree, entries []Entry, maxWait time.Duration, now time.Time) []Entry {
	if maxWait <= 0 {
		maxWait = config.DefaultMaxWait
	}
	ranks := make(map[string]int, len(entries))
	deps := make(map[string][]string, len(entries))
	for _, e := range entries {
		h := model.ParseHeader("")
		if text, _, err := t.ReadPlan(reviewRel(e.Slug)); err == nil {
			h = model.ParseHeader(text)
		}
		deps[e.Slug] = h.DependsOn
		switch {
		case e.Hotfix:
			ranks[e.Slug] = 0
		case h.Priority == "P1" || now.Sub(e.AddedAt) >= maxWait:
			ranks[e.Slug] = 1
		default:
			ranks[e.Slug] = 2
		}
	}
	out := append([]Entry(nil), entries...)
	sort.SliceStable(out, func(i, j int) bool { return ranks[out[i].Slug] < ranks[out[j].Slug] })
	return afterDeps(out, deps)
}

// afterDeps moves each entry behind the queued entries its plan depends
// on, keeping the order otherwise; a cycle is left as it is after n passes.
func afterDeps(out []Entry, deps map[string][]string) []Entry {
	for range out {
		moved := false
		for i := 0; i < len(out) && !moved; i++ {
			last := -1
			for _, d := range deps[out[i].Slug] {
				if p := position(out, d); p > last {
					last = p
				}
			}
			if last > i {
				e := out[i]
				out = append(out[:i], out[i+1:]...)
				out = append(out[:last], append([]Entry{e}, out[last:]...)...)
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	return out
}

// waitsOn refuses slug while a plan it depends on is held back in the
// queue.
func waitsOn(t *planfs.Tree, slug string, held map[string]bool) error {
	text, _, err := t.ReadPlan(reviewRel(slug))
	if err != nil {
		return nil
	}
	for _, d := range model.ParseHeader(text).DependsOn {
		if held[d] {
			return fmt.Errorf("%w: %s depends on %s, which cannot land yet", ErrNotReady, slug, d)
		}
	}
	return nil
}
