package kit

import (
	"sync"

	"github.com/muesli/termenv"
)

// RowCache is the panes' rows as a hub's sessions show them: a row is
// rendered once for every session whose table is built from the same data
// at the same width, colour profile and clock, and each session only
// slices. Twenty sessions on one project then render a change's rows once.
//
// A set of rows is found by everything its text depends on (rowsKey); a
// session that differs in any of it (its width, its profile, its filter)
// gets a set of its own. Sets no session has asked for lately are dropped,
// so old data and old seconds do not stay.
type RowCache struct {
	mu   sync.Mutex
	sets map[RowsKey]*RowSet
	tick uint64 // counts lookups, for the least recently used
}

// rowSetsKept bounds the cache: enough for every pane at a few widths and
// profiles, and the second before.
const rowSetsKept = 64

// RowsKey is what a table's rows are rendered from. from is the pane's own
// part (its data, lane, filter and columns); it must be comparable, and
// two tables with the same from must have the same rows in the same order.
type RowsKey struct {
	From    any
	Width   int
	Profile termenv.Profile
	Dark    bool
	Now     float64
}

// RowSet is one table's rows, rendered when first seen by any session.
// Its mutex is held while a row renders, so sessions that need the same
// row wait for it rather than render it again.
type RowSet struct {
	mu   sync.Mutex
	rows []string
	done []bool
	used uint64 // rowCache.mu
}

func NewRowCache() *RowCache { return &RowCache{sets: map[RowsKey]*RowSet{}} }

// Get is the set for k, of n rows, made (and the least recently used one
// dropped) when there is none.
func (c *RowCache) Get(k RowsKey, n int) *RowSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	if s, ok := c.sets[k]; ok && len(s.rows) == n {
		s.used = c.tick
		return s
	}
	if len(c.sets) >= rowSetsKept {
		var oldest RowsKey
		least := c.tick
		for k, s := range c.sets {
			if s.used < least {
				oldest, least = k, s.used
			}
		}
		delete(c.sets, oldest)
	}
	s := &RowSet{rows: make([]string, n), done: make([]bool, n), used: c.tick}
	c.sets[k] = s
	return s
}

// Len is how many sets are kept (tests).
func (c *RowCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sets)
}

// LineMemo is the frame's lines as the sessions of a hub lay them out
// (fitted to a width, inked): the same line at the same width is measured
// once for them all, since measuring (ansi.StringWidth) is most of what a
// frame costs once its rows are rendered. It is dropped whole when full.
type LineMemo struct {
	mu    sync.Mutex
	lines map[LineKey]string
}

// linesKept bounds the memo: some frames' worth for every size and profile.
const linesKept = 4096

type LineKey struct {
	S    string
	W    int
	Body bool   // a body line (bodyLine), not a fit
	Ink  string // the body's Text colour
}

func (c *LineMemo) Get(k LineKey, lay func() string) string {
	c.mu.Lock()
	out, ok := c.lines[k]
	c.mu.Unlock()
	if ok {
		return out
	}
	out = lay()
	c.mu.Lock()
	if len(c.lines) >= linesKept {
		clear(c.lines)
	}
	c.lines[k] = out
	c.mu.Unlock()
	return out
}

// NewLineMemo is an empty memo.
func NewLineMemo() *LineMemo { return &LineMemo{lines: map[LineKey]string{}} }
