package model

import "strings"

// Unmet is one dependency that holds a plan back and why: `open:<lane>`,
// `missing` or `cycle`.
type Unmet struct {
	Slug   string `json:"slug"`
	Reason string `json:"reason"`
}

// DepStatus is the verdict on a plan's Depends on list.
type DepStatus struct {
	Met   bool    `json:"met"`
	Unmet []Unmet `json:"unmet"`
}

// History answers whether git ever had slug in .plans/completed/. Callers make
// it lazy so a scan runs git at most once.
type History func(slug string) bool

// DepKey is the case-folded slug a plan answers to in dependency lookups,
// with a `YYYY-MM-DD-` prefix dropped.
func DepKey(slug string) string {
	if hasDatePrefix(slug) {
		slug = slug[11:]
	}
	return strings.ToLower(slug)
}

func hasDatePrefix(s string) bool {
	if len(s) < 11 {
		return false
	}
	for i := range 11 {
		c := s[i]
		switch i {
		case 4, 7, 10:
			if c != '-' {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

// DepIndex finds plans by dependency key; build it once per snapshot.
type DepIndex struct {
	open      map[string]Lane // first open lane holding the key
	completed map[string]bool
	byKey     map[string][]int // plan indices with that key in open lanes
	plans     []Plan
}

// NewDepIndex indexes every plan of s by its dependency key.
func NewDepIndex(s *Snapshot) *DepIndex {
	n := len(s.Plans)
	ix := &DepIndex{open: make(map[string]Lane, n), completed: make(map[string]bool, n/4), byKey: make(map[string][]int, n), plans: s.Plans}
	for i := range s.Plans {
		p := &s.Plans[i]
		k := DepKey(p.Slug)
		if p.Lane.Open() {
			if prev, ok := ix.open[k]; !ok || laneRank(p.Lane) < laneRank(prev) {
				ix.open[k] = p.Lane
			}
			ix.byKey[k] = append(ix.byKey[k], i)
		} else if p.Lane == Completed {
			// Only completed/ meets a dependency; a plan outside the known
			// lanes (or with no lane) is as good as missing.
			ix.completed[k] = true
		}
	}
	return ix
}

// Evaluate judges every plan's dependencies, marking those caught in a cycle
// among open plans. The result is indexed like s.Plans.
func (ix *DepIndex) Evaluate(history History) []DepStatus {
	out := make([]DepStatus, len(ix.plans))
	cyclic := ix.cycles()
	for i := range ix.plans {
		out[i] = ix.evaluate(i, history, cyclic)
	}
	return out
}

func (ix *DepIndex) evaluate(i int, history History, cyclic map[int]map[string]bool) DepStatus {
	st := DepStatus{Met: true}
	for _, dep := range ix.plans[i].Header.DependsOn {
		k := DepKey(dep)
		var reason string
		switch lane, open := ix.open[k]; {
		case cyclic[i][k]:
			reason = "cycle"
		case open:
			reason = "open:" + string(lane)
		case ix.completed[k]:
		case history != nil && history(dep):
		default:
			reason = "missing"
		}
		if reason != "" {
			st.Met = false
			st.Unmet = append(st.Unmet, Unmet{Slug: dep, Reason: reason})
		}
	}
	return st
}

// cycles finds, for each open plan on a dependency cycle, the dependency keys
// that lead back into it. Iterative Tarjan, so deep chains cannot overflow.
func (ix *DepIndex) cycles() map[int]map[string]bool {
	comp, ncomp := ix.components()
	size := make([]int, ncomp)
	for _, c := range comp {
		if c >= 0 {
			size[c]++
		}
	}
	out := map[int]map[string]bool{}
	for v := range ix.plans {
		if comp[v] < 0 {
			continue
		}
		for _, d := range ix.plans[v].Header.DependsOn {
			k := DepKey(d)
			for _, w := range ix.byKey[k] {
				if comp[w] == comp[v] && (size[comp[v]] > 1 || w == v) {
					if out[v] == nil {
						out[v] = map[string]bool{}
					}
					out[v][k] = true
				}
			}
		}
	}
	return out
}

// edges are the plans open plan v depends on.
func (ix *DepIndex) edges(v int) []int {
	var out []int
	p := &ix.plans[v]
	if !p.Lane.Open() {
		return nil
	}
	for _, d := range p.Header.DependsOn {
		out = append(out, ix.byKey[DepKey(d)]...)
	}
	return out
}

// components numbers the strongly connected components of the dependency
// graph (Tarjan's algorithm, with an explicit stack so a long chain cannot
// overflow the goroutine's): comp[v] is v's, -1 for a plan no walk reached
// (it has no dependencies).
func (ix *DepIndex) components() (comp []int, ncomp int) {
	n := len(ix.plans)
	t := &tarjan{ix: ix, index: make([]int, n), low: make([]int, n), onStack: make([]bool, n), comp: make([]int, n)}
	for i := range t.index {
		t.index[i], t.comp[i] = -1, -1
	}
	for root := 0; root < n; root++ {
		if t.index[root] < 0 && len(ix.plans[root].Header.DependsOn) > 0 {
			t.walk(root)
		}
	}
	return t.comp, t.ncomp
}

// tarjan is the state of components' walk: each plan's visit order
// (index, -1 before its visit) and lowest order reachable (low), the
// stack of plans not yet in a component, and the components so far.
type tarjan struct {
	ix          *DepIndex
	index, low  []int
	onStack     []bool
	stack, comp []int
	next, ncomp int
}

// tarjanFrame is one plan of the walk's explicit call stack, with the
// successors it has still to walk (from child on).
type tarjanFrame struct {
	v     int
	succ  []int
	child int
}

// visit numbers v and pushes it on the stack.
func (t *tarjan) visit(v int) tarjanFrame {
	t.index[v], t.low[v] = t.next, t.next
	t.next++
	t.stack = append(t.stack, v)
	t.onStack[v] = true
	return tarjanFrame{v: v, succ: t.ix.edges(v)}
}

// walk visits every plan root reaches, depth first, closing each
// component when its root's walk ends.
func (t *tarjan) walk(root int) {
	call := []tarjanFrame{t.visit(root)}
	for len(call) > 0 {
		f := &call[len(call)-1]
		if f.child < len(f.succ) {
			w := f.succ[f.child]
			f.child++
			if t.index[w] < 0 {
				call = append(call, t.visit(w))
			} else if t.onStack[w] {
				t.low[f.v] = min(t.low[f.v], t.index[w])
			}
			continue
		}
		v := f.v
		call = call[:len(call)-1]
		if len(call) > 0 {
			p := call[len(call)-1].v
			t.low[p] = min(t.low[p], t.low[v])
		}
		if t.low[v] == t.index[v] {
			t.close(v)
		}
	}
}

// close pops the component whose root is v off the stack and numbers it.
func (t *tarjan) close(v int) {
	for {
		w := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.onStack[w] = false
		t.comp[w] = t.ncomp
		if w == v {
			break
		}
	}
	t.ncomp++
}
