package kit

import "strings"

// Table is a scrolling window over rows that are rendered once per data or
// size change and cached, so View only slices: ten thousand rows cost what
// the visible ones cost. A Table that names what its rows are made of
// (setShared) takes them from its hub's rowCache, so the sessions showing
// them alike render each row once between them.
type Table struct {
	Keys   []string // identity of each row, to keep the selection across refreshes
	render RowFunc
	cache  []string
	done   []bool
	Cursor int
	Offset int
	Height int
	Width  int // the table's width, for the selected row's highlight

	from      any     // what the rows are made of (rowsKey.from); nil: this session's alone
	shared    *RowSet // the hub's rows for sharedKey
	sharedKey RowsKey
}

// set replaces the rows, keeping the cursor on the same key when it is still there.
// RowFunc renders row i, not yet highlighted; it reads the pane's rows
// and the session's context through pointers, never a copy of them, since
// Bubble Tea passes copies of the model and an old one has old facts.
type RowFunc func(i int, selected bool) string

// LineEnv is what a table needs of its session to draw its rows: the
// selected row's highlight and the rows other sessions rendered alike.
type LineEnv interface {
	Highlight(line string) string
	// Sharing is the cache of the rows the sessions share and the key of
	// the rows made of from at width there; a nil cache: this session's
	// rows are its own.
	Sharing(from any, width int) (*RowCache, RowsKey)
}

func (t *Table) Set(keys []string, render RowFunc) {
	cur := t.Key()
	t.Keys, t.render, t.from = keys, render, nil
	t.Invalidate()
	t.Cursor = min(t.Cursor, max(0, len(keys)-1))
	if cur != "" {
		for i, k := range keys {
			if k == cur {
				t.Cursor = i
				break
			}
		}
	}
	t.Clamp()
}

// SetShared is set for rows made of from alone (with the width, the
// colour profile and the clock): from must be comparable, and equal only
// for tables whose render gives the same rows in the same order. Served
// sessions then share the rendered rows.
func (t *Table) SetShared(keys []string, from any, render RowFunc) {
	t.Set(keys, render)
	t.from = from
}

// Invalidate drops the rendered rows; they are rendered again when seen.
func (t *Table) Invalidate() {
	t.shared = nil
	if cap(t.cache) >= len(t.Keys) {
		t.cache = t.cache[:len(t.Keys)]
		t.done = t.done[:len(t.Keys)]
		clear(t.done)
	} else {
		t.cache = make([]string, len(t.Keys))
		t.done = make([]bool, len(t.Keys))
	}
}

func (t *Table) Key() string {
	if t.Cursor < len(t.Keys) {
		return t.Keys[t.Cursor]
	}
	return ""
}

func (t *Table) Len() int { return len(t.Keys) }

func (t *Table) SetHeight(h int) {
	t.Height = max(1, h)
	t.Clamp()
}

func (t *Table) Move(d int) {
	t.Cursor = max(0, min(len(t.Keys)-1, t.Cursor+d))
	t.Clamp()
}

// GoTo puts the cursor on key, reporting whether it was found.
func (t *Table) GoTo(key string) bool {
	for i, k := range t.Keys {
		if k == key {
			t.Cursor = i
			t.Clamp()
			return true
		}
	}
	return false
}

// Clamp keeps the cursor inside the window and the window inside the rows.
func (t *Table) Clamp() {
	if t.Cursor < 0 {
		t.Cursor = 0
	}
	if t.Cursor < t.Offset {
		t.Offset = t.Cursor
	}
	if t.Height > 0 && t.Cursor >= t.Offset+t.Height {
		t.Offset = t.Cursor - t.Height + 1
	}
	t.Offset = max(0, min(t.Offset, len(t.Keys)-t.Height))
}

// Lines returns the visible rows, padded to the window's height with blanks.
func (t *Table) Lines(env LineEnv, blank string) []string {
	out := make([]string, 0, t.Height)
	cache, done := t.cache, t.done
	if s := t.sharedRows(env); s != nil {
		// Held while rendering: a session wanting the same rows waits
		// for them instead of rendering them again.
		s.mu.Lock()
		defer s.mu.Unlock()
		cache, done = s.rows, s.done
	}
	for i := t.Offset; i < len(t.Keys) && len(out) < t.Height; i++ {
		if i == t.Cursor {
			// Highlighted across the whole table width.
			out = append(out, env.Highlight(Fit(t.render(i, true), t.Width)))
			continue
		}
		if !done[i] {
			cache[i], done[i] = t.render(i, false), true
		}
		out = append(out, cache[i])
	}
	for len(out) < t.Height {
		out = append(out, blank)
	}
	return out
}

// sharedRows is the hub's set of this table's rows, nil when the rows are
// this session's alone: no hub, or a pane that does not name what its
// rows are made of.
func (t *Table) sharedRows(env LineEnv) *RowSet {
	if t.from == nil {
		return nil
	}
	c, k := env.Sharing(t.from, t.Width)
	if c == nil {
		return nil
	}
	if t.shared == nil || t.sharedKey != k {
		t.shared, t.sharedKey = c.Get(k, len(t.Keys)), k
	}
	return t.shared
}

// ScrollHint says where the window is, for a box title: "12–31 of 10000".
func (t *Table) ScrollHint() string {
	if len(t.Keys) <= t.Height {
		return ""
	}
	var b strings.Builder
	b.WriteString(Itoa(t.Offset + 1))
	b.WriteString("–")
	b.WriteString(Itoa(min(len(t.Keys), t.Offset+t.Height)))
	b.WriteString(" of ")
	b.WriteString(Itoa(len(t.Keys)))
	return b.String()
}

func (t *Table) SetSize(w, h int) {
	t.Width = w
	t.SetHeight(h)
}

func (t *Table) List() *Table { return t }

func Gutter(selected bool) string {
	if selected {
		return "▸ "
	}
	return "  "
}

// Shared is the hub's set the rows were last drawn from, nil when they
// are this session's alone: sessions drawing alike share one.
func (t *Table) Shared() *RowSet { return t.shared }
