package mdterm

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// piece is text drawn in one style (SGR parameters, "" for none).
type piece struct{ s, sgr string }

// word is what wrapping never splits (unless it is wider than a line):
// the pieces between two spaces, "**bold**," being one word of two pieces.
type word []piece

// breakWord is a hard line break.
var breakWord = word{{"\n", ""}}

// words collects pieces into words, a space ending one.
type words struct {
	out []word
	cur word
}

func (ws *words) add(s, sgr string) {
	for s != "" {
		i := strings.IndexAny(s, " \t\n")
		if i < 0 {
			ws.cur = append(ws.cur, piece{s, sgr})
			return
		}
		if i > 0 {
			ws.cur = append(ws.cur, piece{s[:i], sgr})
		}
		ws.end()
		s = s[i+1:]
	}
}

// glue adds s to the current word, spaces and all (a mark such as "**").
func (ws *words) glue(s, sgr string) { ws.cur = append(ws.cur, piece{s, sgr}) }

func (ws *words) end() {
	if len(ws.cur) > 0 {
		ws.out = append(ws.out, ws.cur)
		ws.cur = nil
	}
}

func (ws *words) hardBreak() {
	ws.end()
	ws.out = append(ws.out, breakWord)
}

// splitWords is s as words in one style.
func splitWords(s, sgr string) []word {
	var ws words
	ws.add(s, sgr)
	ws.end()
	return ws.out
}

// inlines is n's inline content as words, base its style.
func (r *renderer) inlines(n ast.Node, base string) []word {
	var ws words
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(&ws, c, base)
	}
	ws.end()
	return ws.out
}

func (r *renderer) children(ws *words, n ast.Node, sgr string) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(ws, c, sgr)
	}
}

// inline adds one inline node's words in style sgr.
func (r *renderer) inline(ws *words, n ast.Node, sgr string) {
	th := r.th
	switch n := n.(type) {
	case *ast.Text:
		r.text(ws, n, sgr)
	case *ast.String:
		ws.add(string(n.Value), sgr)
	case *ast.Emphasis:
		mark, add := "*", "3"
		if n.Level == 2 {
			mark, add = "**", "1"
		}
		r.marked(ws, n, th.with(sgr, add), mark)
	case *ast.CodeSpan:
		r.codeSpan(ws, n)
	case *ast.Link:
		r.link(ws, n, string(n.Destination))
	case *ast.AutoLink:
		ws.add(string(n.Label(r.src)), th.url)
	case *ast.Image:
		ws.add("Image: ", th.image)
		r.children(ws, n, th.image)
		ws.add(" → "+string(n.Destination), th.url)
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			ws.add(string(seg.Value(r.src)), sgr)
		}
	default:
		r.children(ws, n, sgr)
	}
}

// text adds a text node's words, less the r.skip bytes not to show (a
// task's box), with the line break that ends it.
func (r *renderer) text(ws *words, n *ast.Text, sgr string) {
	v := n.Segment.Value(r.src)
	if r.skip > 0 {
		k := min(r.skip, len(v))
		v, r.skip = v[k:], r.skip-k
	}
	if !n.IsRaw() {
		v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
	}
	r.struck(ws, string(v), sgr)
	switch {
	case n.HardLineBreak():
		ws.hardBreak()
	case n.SoftLineBreak():
		ws.end()
	}
}

// marked is emphasis: a style, or in plain text the source's marks.
func (r *renderer) marked(ws *words, n ast.Node, sgr, mark string) {
	if r.th.plain {
		ws.glue(mark, "")
	}
	r.children(ws, n, sgr)
	if r.th.plain {
		ws.glue(mark, "")
	}
}

// codeSpan is inline code: coloured, with no background (inside a
// bordered pane a block of colour is noise); plain text as glamour showed
// it, without its backticks.
func (r *renderer) codeSpan(ws *words, n *ast.CodeSpan) {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Segment.Value(r.src))
		} else if s, ok := c.(*ast.String); ok {
			b.Write(s.Value)
		}
	}
	ws.add(b.String(), r.th.code)
}

// link is its text then its address, the address alone when they match.
func (r *renderer) link(ws *words, n ast.Node, dest string) {
	var text words
	r.children(&text, n, r.th.link)
	text.end()
	var plain []string
	for _, w := range text.out {
		var b strings.Builder
		for _, p := range w {
			b.WriteString(p.s)
		}
		plain = append(plain, b.String())
	}
	if strings.Join(plain, " ") != dest {
		for i, w := range text.out {
			if i > 0 {
				ws.end()
			}
			ws.cur = append(ws.cur, w...)
		}
		ws.end()
	}
	ws.add(dest, r.th.url)
}

// width is how many columns s takes.
func width(s string) int { return ansi.StringWidth(s) }

func (w word) width() int {
	n := 0
	for _, p := range w {
		n += width(p.s)
	}
	return n
}

// line is pieces being laid out, neighbours of one style merged.
type line []piece

func (l *line) add(p piece) {
	if n := len(*l); n > 0 && (*l)[n-1].sgr == p.sgr {
		(*l)[n-1].s += p.s
		return
	}
	*l = append(*l, p)
}

func (l line) String() string {
	var b strings.Builder
	for _, p := range l {
		b.WriteString(paint(p.sgr, p.s))
	}
	return b.String()
}

// wrap lays words out in lines of at most w columns, a space (in style
// gap) between two words; a word wider than a line is cut.
func wrap(ws []word, w int, gap string) []string {
	w = max(w, 1)
	var out []string
	var cur line
	used := 0
	flush := func() {
		out = append(out, cur.String())
		cur, used = nil, 0
	}
	for _, wd := range ws {
		if len(wd) == 1 && wd[0] == breakWord[0] {
			flush()
			continue
		}
		n := wd.width()
		if used > 0 && used+1+n > w {
			flush()
		}
		if used > 0 {
			cur.add(piece{" ", gap})
			used++
		}
		for used+n > w {
			// Wider than a whole line: as much as fits, then the rest.
			head, tail := cutWord(wd, w-used)
			for _, p := range head {
				cur.add(p)
			}
			flush()
			wd, n = tail, tail.width()
		}
		for _, p := range wd {
			cur.add(p)
		}
		used += n
	}
	if used > 0 || len(cur) > 0 {
		flush()
	}
	return out
}

// cutWord splits wd after w columns.
func cutWord(wd word, w int) (word, word) {
	var head, tail word
	used := 0
	for i, p := range wd {
		if used >= w {
			tail = append(tail, wd[i:]...)
			break
		}
		pw := width(p.s)
		if used+pw <= w {
			head = append(head, p)
			used += pw
			continue
		}
		h := ansi.Truncate(p.s, w-used, "")
		if h == "" && used == 0 {
			// One character wider than the line: it goes alone.
			_, size := utf8.DecodeRuneInString(p.s)
			h = p.s[:size]
		}
		head = append(head, piece{h, p.sgr})
		tail = append(append(tail, piece{p.s[len(h):], p.sgr}), wd[i+1:]...)
		break
	}
	return head, tail
}

// paint wraps s in the SGR sequence sgr and a reset.
func paint(sgr, s string) string {
	if sgr == "" || s == "" {
		return s
	}
	return "\x1b[" + sgr + "m" + s + "\x1b[0m"
}
