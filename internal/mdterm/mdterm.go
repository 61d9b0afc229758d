// Package mdterm renders markdown (plans, proposals) for a terminal: ANSI
// colours in the look of glamour's dark and light styles, or plain text,
// word-wrapped to a width. It owns the parser set-up (goldmark's
// CommonMark; GitHub's tables, strikethrough and task lists are read in
// gfm.go), the styles and the small syntax highlighter of fenced code.
// Every fleetwatch process links this package and most never draw
// markdown, so what it builds (the parser, the highlighter's word lists)
// is built on first use, never at init. goldmark's own package inits
// (util's entity table, parser's tables) still run at every start: Go has
// no lazy init; internal/systest/starttest bounds them.
package mdterm

import (
	"strings"
	"sync"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Styles are the names Render takes.
const (
	Dark  = "dark"
	Light = "light"
	NoTTY = "notty" // plain text, no escapes
	ASCII = "ascii" // plain text, ASCII marks only
)

// margin is the space left of every line, as glamour's styles leave.
const margin = 2

// mdParser is goldmark's CommonMark parser, built once on first use
// (never at init).
var mdParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
})

// Render is src rendered in style (Dark, Light, NoTTY or ASCII; another
// name is NoTTY) wrapped at width columns, without a trailing newline. The
// source must be safe for a terminal already: its text is copied through.
func Render(src, style string, width int) string {
	th := themeOf(style)
	source := []byte(src)
	doc := mdParser().Parse(text.NewReader(source))
	r := &renderer{src: source, th: th}
	lines := r.blocks(doc, max(width-2*margin, 10))
	pad := strings.Repeat(" ", margin)
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if l != "" {
			b.WriteString(pad + l)
		}
	}
	return b.String()
}

// renderer walks one document.
type renderer struct {
	src  []byte
	th   *theme
	skip int // bytes of the next text not to show: a task's box
}

// blocks renders n's children, a blank line between each two.
func (r *renderer) blocks(n ast.Node, w int) []string { return r.joined(n, w, true) }

// joined renders n's children, a blank line between each two if spaced
// (not in a tight list's item).
func (r *renderer) joined(n ast.Node, w int, spaced bool) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := r.block(c, w)
		if len(lines) == 0 {
			continue
		}
		if spaced && len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

// block renders one block node at width w.
func (r *renderer) block(n ast.Node, w int) []string {
	switch n := n.(type) {
	case *ast.Heading:
		return r.heading(n, w)
	case *ast.Paragraph:
		if t := r.tableOf(n); t != nil {
			return r.table(t, w)
		}
		return wrap(r.inlines(n, r.th.text), w, r.th.text)
	case *ast.TextBlock:
		return wrap(r.inlines(n, r.th.text), w, r.th.text)
	case *ast.List:
		return r.list(n, w)
	case *ast.Blockquote:
		return prefixed(r.blocks(n, w-2), r.th.paint(r.th.quote, r.th.quoteBar), r.th.paint(r.th.quote, r.th.quoteBar))
	case *ast.ThematicBreak:
		return []string{r.th.paint(r.th.rule, "--------")}
	case *ast.FencedCodeBlock:
		return r.code(n, string(n.Language(r.src)), w)
	case *ast.CodeBlock:
		return r.code(n, "", w)
	case *ast.HTMLBlock:
		return r.html(n, w)
	}
	// Anything else (a block an extension added): its text, wrapped.
	return wrap(r.inlines(n, r.th.text), w, r.th.text)
}

// heading is "# Title" in the heading colour; a level-1 heading is a
// coloured band, as glamour draws it.
func (r *renderer) heading(n *ast.Heading, w int) []string {
	if n.Level == 1 && !r.th.plain {
		words := r.inlines(n, r.th.h1)
		words = append(append([]word{{{" ", r.th.h1}}}, words...), word{{" ", r.th.h1}})
		return wrap(joinEdges(words), w, r.th.h1)
	}
	mark := strings.Repeat("#", n.Level)
	words := append([]word{{{mark, r.th.heading}}}, r.inlines(n, r.th.heading)...)
	return wrap(words, w, r.th.heading)
}

// joinEdges glues the band's padding spaces to the first and last words.
func joinEdges(ws []word) []word {
	if len(ws) < 3 {
		return ws
	}
	first := append(ws[0], ws[1]...)
	last := append(ws[len(ws)-2], ws[len(ws)-1]...)
	if len(ws) == 3 {
		return []word{append(first, ws[2]...)}
	}
	return append(append([]word{first}, ws[2:len(ws)-2]...), last)
}

// list renders each item under its mark: a bullet, its number, or a
// task's box; the item's lines hang under its text.
func (r *renderer) list(n *ast.List, w int) []string {
	var out []string
	num := n.Start
	for it := n.FirstChild(); it != nil; it = it.NextSibling() {
		mark := r.th.bullet
		if n.IsOrdered() {
			mark = itoa(num) + string(n.Marker) + " "
			num++
		}
		box, ticked := r.taskMark(it)
		if box > 0 {
			mark = r.th.unticked
			if ticked {
				mark = r.th.ticked
			}
		}
		mw := width(mark)
		r.skip = box
		lines := r.joined(it, w-mw, !n.IsTight)
		r.skip = 0
		if len(lines) == 0 {
			lines = []string{""}
		}
		if !n.IsTight && len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, prefixed(lines, r.th.paint(r.th.text, mark), strings.Repeat(" ", mw))...)
	}
	return out
}

// prefixed puts first before the first line and rest before the others;
// a blank line gets the prefix trimmed of trailing spaces.
func prefixed(lines []string, first, rest string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		if l == "" {
			p = strings.TrimRight(p, " ")
		}
		out[i] = p + l
	}
	return out
}

// html shows raw HTML as the text it is, wrapped.
func (r *renderer) html(n *ast.HTMLBlock, w int) []string {
	var out []string
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		out = append(out, wrap(splitWords(strings.TrimRight(string(seg.Value(r.src)), "\n"), r.th.text), w, r.th.text)...)
	}
	if n.HasClosure() {
		c := strings.TrimRight(string(n.ClosureLine.Value(r.src)), "\n")
		out = append(out, wrap(splitWords(c, r.th.text), w, r.th.text)...)
	}
	return out
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
