package mdterm

import (
	"strings"

	east "github.com/yuin/goldmark/extension/ast"
)

// table is a GFM table: columns as wide as their widest cell, narrowed
// (the widest first, cells cut with an ellipsis) to fit the width.
func (r *renderer) table(t *east.Table, w int) []string {
	var rows [][]word
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		sgr := r.th.text
		if _, ok := row.(*east.TableHeader); ok {
			sgr = r.th.tableHead
		}
		var cells []word
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, joinWords(r.inlines(c, sgr), sgr))
		}
		rows = append(rows, cells)
	}
	widths := columnWidths(rows, w-width(r.th.colSep)*(len(t.Alignments)-1), len(t.Alignments))
	var out []string
	for i, cells := range rows {
		var l line
		for c, cw := range widths {
			if c > 0 {
				l.add(piece{r.th.colSep, r.th.rule})
			}
			var cell word
			if c < len(cells) {
				cell = cells[c]
			}
			for _, p := range r.fit(cell, cw, t.Alignments[c]) {
				l.add(p)
			}
		}
		out = append(out, strings.TrimRight(l.String(), " "))
		if i == 0 {
			var parts []string
			for _, cw := range widths {
				parts = append(parts, strings.Repeat(r.th.rowRule, cw))
			}
			out = append(out, paint(r.th.rule, strings.Join(parts, r.th.cross)))
		}
	}
	return out
}

// joinWords is words as one, spaces between (a cell is not wrapped).
func joinWords(ws []word, sgr string) word {
	var out word
	for i, w := range ws {
		if i > 0 {
			out = append(out, piece{" ", sgr})
		}
		out = append(out, w...)
	}
	return out
}

// columnWidths are the columns' widths: their widest cells', the widest
// column narrowed one at a time while the sum passes room (to 3 at least).
func columnWidths(rows [][]word, room, n int) []int {
	widths := make([]int, n)
	for _, cells := range rows {
		for c := 0; c < n && c < len(cells); c++ {
			widths[c] = max(widths[c], cells[c].width())
		}
	}
	for {
		sum, widest := 0, 0
		for c, cw := range widths {
			sum += cw
			if cw > widths[widest] {
				widest = c
			}
		}
		if sum <= room || widths[widest] <= 3 {
			return widths
		}
		widths[widest]--
	}
}

// fit is cell padded to w columns as aligned, or cut to w with an
// ellipsis.
func (r *renderer) fit(cell word, w int, align east.Alignment) word {
	n := cell.width()
	if n > w {
		head, _ := cutWord(cell, w-width(r.th.ellipsis))
		return append(head, piece{r.th.ellipsis, r.th.text})
	}
	gap := w - n
	left := 0
	switch align {
	case east.AlignRight:
		left = gap
	case east.AlignCenter:
		left = gap / 2
	}
	out := word{{strings.Repeat(" ", left), ""}}
	out = append(out, cell...)
	return append(out, piece{strings.Repeat(" ", gap-left), ""})
}
