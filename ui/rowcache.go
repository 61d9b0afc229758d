package ui

import (
	"math"
	"sync"

	"github.com/muesli/termenv"

	"github.com/fleetwatch/fleetwatch/model"
)

// rowCache is the panes' rows as a hub's sessions show them: a row is
// rendered once for every session whose table is built from the same data
// at the same width, colour profile and clock, and each session only
// slices. Twenty sessions on one project then render a change's rows once.
//
// A set of rows is found by everything its text depends on (rowsKey); a
// session that differs in any of it (its width, its profile, its filter)
// gets a set of its own. Sets no session has asked for lately are dropped,
// so old data and old seconds do not stay.
type rowCache struct {
	mu   sync.Mutex
	sets map[rowsKey]*rowSet
	tick uint64 // counts lookups, for the least recently used
}

// rowSetsKept bounds the cache: enough for every pane at a few widths and
// profiles, and the second before.
const rowSetsKept = 64

// rowsKey is what a table's rows are rendered from. from is the pane's own
// part (its data, lane, filter and columns); it must be comparable, and
// two tables with the same from must have the same rows in the same order.
type rowsKey struct {
	from    any
	width   int
	profile termenv.Profile
	dark    bool
	now     float64
}

// rowSet is one table's rows, rendered when first seen by any session.
// Its mutex is held while a row renders, so sessions that need the same
// row wait for it rather than render it again.
type rowSet struct {
	mu   sync.Mutex
	rows []string
	done []bool
	used uint64 // rowCache.mu
}

func newRowCache() *rowCache { return &rowCache{sets: map[rowsKey]*rowSet{}} }

// get is the set for k, of n rows, made (and the least recently used one
// dropped) when there is none.
func (c *rowCache) get(k rowsKey, n int) *rowSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	if s, ok := c.sets[k]; ok && len(s.rows) == n {
		s.used = c.tick
		return s
	}
	if len(c.sets) >= rowSetsKept {
		var oldest rowsKey
		least := c.tick
		for k, s := range c.sets {
			if s.used < least {
				oldest, least = k, s.used
			}
		}
		delete(c.sets, oldest)
	}
	s := &rowSet{rows: make([]string, n), done: make([]bool, n), used: c.tick}
	c.sets[k] = s
	return s
}

// len is how many sets are kept (tests).
func (c *rowCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sets)
}

// rowsOf is what the plans' and the leases' rows are made of, their
// rowsKey.from: the pane, the board, the lane, the filter and the columns
// (a comparable struct of the pane's own).
type rowsOf struct {
	pane   pane
	d      *data
	lane   model.Lane
	needle string
	cols   any
}

// clockNow is the clock a tick judges the rows at. A hub's sessions take
// it to the whole second, so the sessions that tick within one second
// render that second's rows alike, once between them.
func (m *Model) clockNow() float64 {
	now := m.opt.Tree.NowSeconds()
	if m.sub != nil {
		return math.Floor(now)
	}
	return now
}

// lineMemo is the frame's lines as the sessions of a hub lay them out
// (fitted to a width, inked): the same line at the same width is measured
// once for them all, since measuring (ansi.StringWidth) is most of what a
// frame costs once its rows are rendered. It is dropped whole when full.
type lineMemo struct {
	mu    sync.Mutex
	lines map[lineKey]string
}

// linesKept bounds the memo: some frames' worth for every size and profile.
const linesKept = 4096

type lineKey struct {
	s    string
	w    int
	body bool   // a body line (bodyLine), not a fit
	ink  string // the body's Text colour
}

func (c *lineMemo) get(k lineKey, lay func() string) string {
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

// sharing is lineEnv's: a hub's sessions share the rows they render alike.
func (c *common) sharing(from any, width int) (*rowCache, rowsKey) {
	if c.opt.Hub == nil {
		return nil, rowsKey{}
	}
	return c.opt.Hub.rows, rowsKey{from: from, width: width, profile: c.r.ColorProfile(), dark: c.r.HasDarkBackground(), now: c.now}
}

// fitted is fit(s, w), measured once for a hub's sessions.
func (m *common) fitted(s string, w int) string {
	if m.opt.Hub == nil {
		return Fit(s, w)
	}
	return m.opt.Hub.lines.get(lineKey{s: s, w: w}, func() string { return Fit(s, w) })
}

// bodyLine is a body line as View draws it: after the margin, fitted to
// the body and inked; laid out once for a hub's sessions.
func (m *Model) bodyLine(line string) string {
	lay := func() string { return m.ink(" " + Fit(line, m.cols)) }
	if m.opt.Hub == nil {
		return lay()
	}
	return m.opt.Hub.lines.get(lineKey{s: line, w: m.cols, body: true, ink: m.inkOn}, lay)
}
