package ui

import "strings"

// table is a scrolling window over rows that are rendered once per data or
// size change and cached, so View only slices: ten thousand rows cost what
// the visible ones cost. A table that names what its rows are made of
// (setShared) takes them from its hub's rowCache, so the sessions showing
// them alike render each row once between them.
type table struct {
	keys   []string // identity of each row, to keep the selection across refreshes
	render rowFunc
	cache  []string
	done   []bool
	cursor int
	offset int
	height int
	width  int // the table's width, for the selected row's highlight

	from      any     // what the rows are made of (rowsKey.from); nil: this session's alone
	shared    *rowSet // the hub's rows for sharedKey
	sharedKey rowsKey
}

// set replaces the rows, keeping the cursor on the same key when it is still there.
// rowFunc renders row i, not yet highlighted; it reads the pane's rows
// and the session's context through pointers, never a copy of them, since
// Bubble Tea passes copies of the model and an old one has old facts.
type rowFunc func(i int, selected bool) string

// lineEnv is what a table needs of its session to draw its rows: the
// selected row's highlight and the rows other sessions rendered alike.
type lineEnv interface {
	highlight(line string) string
	// sharing is the cache of the rows the sessions share and the key of
	// the rows made of from at width there; a nil cache: this session's
	// rows are its own.
	sharing(from any, width int) (*rowCache, rowsKey)
}

func (t *table) set(keys []string, render rowFunc) {
	cur := t.key()
	t.keys, t.render, t.from = keys, render, nil
	t.invalidate()
	t.cursor = min(t.cursor, max(0, len(keys)-1))
	if cur != "" {
		for i, k := range keys {
			if k == cur {
				t.cursor = i
				break
			}
		}
	}
	t.clamp()
}

// setShared is set for rows made of from alone (with the width, the
// colour profile and the clock): from must be comparable, and equal only
// for tables whose render gives the same rows in the same order. Served
// sessions then share the rendered rows.
func (t *table) setShared(keys []string, from any, render rowFunc) {
	t.set(keys, render)
	t.from = from
}

// invalidate drops the rendered rows; they are rendered again when seen.
func (t *table) invalidate() {
	t.shared = nil
	if cap(t.cache) >= len(t.keys) {
		t.cache = t.cache[:len(t.keys)]
		t.done = t.done[:len(t.keys)]
		clear(t.done)
	} else {
		t.cache = make([]string, len(t.keys))
		t.done = make([]bool, len(t.keys))
	}
}

func (t *table) key() string {
	if t.cursor < len(t.keys) {
		return t.keys[t.cursor]
	}
	return ""
}

func (t *table) len() int { return len(t.keys) }

func (t *table) setHeight(h int) {
	t.height = max(1, h)
	t.clamp()
}

func (t *table) move(d int) {
	t.cursor = max(0, min(len(t.keys)-1, t.cursor+d))
	t.clamp()
}

// goTo puts the cursor on key, reporting whether it was found.
func (t *table) goTo(key string) bool {
	for i, k := range t.keys {
		if k == key {
			t.cursor = i
			t.clamp()
			return true
		}
	}
	return false
}

// clamp keeps the cursor inside the window and the window inside the rows.
func (t *table) clamp() {
	if t.cursor < 0 {
		t.cursor = 0
	}
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if t.height > 0 && t.cursor >= t.offset+t.height {
		t.offset = t.cursor - t.height + 1
	}
	t.offset = max(0, min(t.offset, len(t.keys)-t.height))
}

// lines returns the visible rows, padded to the window's height with blanks.
func (t *table) lines(env lineEnv, blank string) []string {
	out := make([]string, 0, t.height)
	cache, done := t.cache, t.done
	if s := t.sharedRows(env); s != nil {
		// Held while rendering: a session wanting the same rows waits
		// for them instead of rendering them again.
		s.mu.Lock()
		defer s.mu.Unlock()
		cache, done = s.rows, s.done
	}
	for i := t.offset; i < len(t.keys) && len(out) < t.height; i++ {
		if i == t.cursor {
			// Highlighted across the whole table width.
			out = append(out, env.highlight(Fit(t.render(i, true), t.width)))
			continue
		}
		if !done[i] {
			cache[i], done[i] = t.render(i, false), true
		}
		out = append(out, cache[i])
	}
	for len(out) < t.height {
		out = append(out, blank)
	}
	return out
}

// sharedRows is the hub's set of this table's rows, nil when the rows are
// this session's alone: no hub, or a pane that does not name what its
// rows are made of.
func (t *table) sharedRows(env lineEnv) *rowSet {
	if t.from == nil {
		return nil
	}
	c, k := env.sharing(t.from, t.width)
	if c == nil {
		return nil
	}
	if t.shared == nil || t.sharedKey != k {
		t.shared, t.sharedKey = c.get(k, len(t.keys)), k
	}
	return t.shared
}

// scrollHint says where the window is, for a box title: "12–31 of 10000".
func (t *table) scrollHint() string {
	if len(t.keys) <= t.height {
		return ""
	}
	var b strings.Builder
	b.WriteString(itoa(t.offset + 1))
	b.WriteString("–")
	b.WriteString(itoa(min(len(t.keys), t.offset+t.height)))
	b.WriteString(" of ")
	b.WriteString(itoa(len(t.keys)))
	return b.String()
}

func (t *table) setSize(w, h int) {
	t.width = w
	t.setHeight(h)
}

func (t *table) list() *table { return t }

func gutter(selected bool) string {
	if selected {
		return "▸ "
	}
	return "  "
}

// finish highlights a selected row across the whole table width.
func (m *Model) finish(line string, selected bool) string {
	if !selected {
		return line
	}
	return m.highlight(Fit(line, m.tableWidth()))
}

// highlight marks a selected line without hiding the colours inside it:
// a background renewed after every reset inside; with no colour at all
// (NO_COLOR, the Ascii profile drops every style) reverse video, written
// directly, so the selection is more than the ▸ in its gutter.
func (c *common) highlight(line string) string {
	if c.plain || c.rowOn == "" {
		return reverseOn + line + reverseOff
	}
	return c.rowOn + strings.ReplaceAll(line, "\x1b[0m", "\x1b[0m"+c.rowOn) + "\x1b[0m"
}

// The escape codes of reverse video, on and off.
const reverseOn, reverseOff = "\x1b[7m", "\x1b[27m"
