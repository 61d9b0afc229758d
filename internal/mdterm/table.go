package mdterm

import (
	"strings"
)

// table is a GFM table: columns as wide as their widest cell, narrowed
// (the widest first, cells cut with an ellipsis) to fit the width.
func (r *renderer) table(t *gfmTable, w int) []string {
	rows := r.tableCells(t)
	widths := columnWidths(rows, w-width(r.th.colSep)*(len(t.aligns)-1), len(t.aligns))
	var out []string
	if t.before != "" {
		out = append(wrap(r.cellWords(t.before, r.th.text), w, r.th.text), "")
	}
	for i, cells := range rows {
		out = append(out, r.tableRow(cells, widths, t.aligns))
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

// tableCells is t's cells as one word each, the first row in the head's
// style.
func (r *renderer) tableCells(t *gfmTable) [][]word {
	var rows [][]word
	for i, row := range t.rows {
		sgr := r.th.text
		if i == 0 {
			sgr = r.th.tableHead
		}
		var cells []word
		for _, c := range row {
			cells = append(cells, joinWords(r.cellWords(c, sgr), sgr))
		}
		rows = append(rows, cells)
	}
	return rows
}

// tableRow lays out one row's cells in columns of widths, each aligned as
// aligns says; a row short of cells has empty ones.
func (r *renderer) tableRow(cells []word, widths []int, aligns []align) string {
	var l line
	for c, cw := range widths {
		if c > 0 {
			l.add(piece{r.th.colSep, r.th.rule})
		}
		var cell word
		if c < len(cells) {
			cell = cells[c]
		}
		for _, p := range r.fit(cell, cw, aligns[c]) {
			l.add(p)
		}
	}
	return strings.TrimRight(l.String(), " ")
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
func (r *renderer) fit(cell word, w int, a align) word {
	n := cell.width()
	if n > w {
		cell, _ = cutWord(cell, w-width(r.th.ellipsis))
		for len(cell) > 0 && strings.TrimRight(cell[len(cell)-1].s, " ") == "" {
			cell = cell[:len(cell)-1]
		}
		if k := len(cell) - 1; k >= 0 {
			cell[k].s = strings.TrimRight(cell[k].s, " ")
		}
		cell = append(cell, piece{r.th.ellipsis, r.th.text})
		n, a = cell.width(), alignLeft
	}
	gap := w - n
	left := 0
	switch a {
	case alignRight:
		left = gap
	case alignCenter:
		left = gap / 2
	}
	out := word{{strings.Repeat(" ", left), ""}}
	out = append(out, cell...)
	return append(out, piece{strings.Repeat(" ", gap-left), ""})
}
