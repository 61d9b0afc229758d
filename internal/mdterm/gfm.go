package mdterm

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// GitHub's additions (tables, ~~strikethrough~~, task lists) are read here
// from what CommonMark leaves (a paragraph, text, an item's first line)
// rather than with goldmark's extension package, whose regexps would be
// compiled at every fleetwatch start.

type align int

const (
	alignNone align = iota
	alignLeft
	alignRight
	alignCenter
)

// gfmTable is a table's cells as markdown source, the header row first.
type gfmTable struct {
	before string // the paragraph's lines above the header, if any
	rows   [][]string
	aligns []align
}

// tableOf is the table a paragraph's lines hold: a header row, a
// delimiter row (|---|:--:|) of as many cells, then body rows; nil if none.
func (r *renderer) tableOf(p ast.Node) *gfmTable {
	lines := p.Lines()
	line := func(i int) string {
		seg := lines.At(i)
		return strings.TrimRight(string(seg.Value(r.src)), "\r\n")
	}
	for i := 1; i < lines.Len(); i++ {
		aligns := delimiterRow(line(i))
		if aligns == nil {
			continue
		}
		header := splitRow(line(i - 1))
		if len(header) != len(aligns) {
			return nil
		}
		t := &gfmTable{aligns: aligns, rows: [][]string{header}}
		for j := i + 1; j < lines.Len(); j++ {
			t.rows = append(t.rows, splitRow(line(j)))
		}
		var before []string
		for j := 0; j < i-1; j++ {
			before = append(before, line(j))
		}
		t.before = strings.Join(before, "\n")
		return t
	}
	return nil
}

// delimiterRow is the alignments a table's delimiter row sets, nil if s
// is not one.
func delimiterRow(s string) []align {
	if !strings.Contains(s, "|") {
		return nil
	}
	var out []align
	for _, c := range splitRow(s) {
		c = strings.TrimSpace(c)
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		dashes := strings.Trim(c, ":")
		if dashes == "" || strings.Trim(dashes, "-") != "" {
			return nil
		}
		switch {
		case left && right:
			out = append(out, alignCenter)
		case left:
			out = append(out, alignLeft)
		case right:
			out = append(out, alignRight)
		default:
			out = append(out, alignNone)
		}
	}
	return out
}

// splitRow is a row's cells: split at each pipe that is neither escaped
// nor in a code span, the outer pipes optional.
func splitRow(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "|")
	if strings.HasSuffix(s, "|") && !strings.HasSuffix(s, `\|`) {
		s = s[:len(s)-1]
	}
	var cells []string
	var cur strings.Builder
	code := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && s[i+1] == '|':
			cur.WriteByte('|')
			i++
		case c == '`':
			code = !code
			cur.WriteByte(c)
		case c == '|' && !code:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// cellWords is one cell's markdown as words in style sgr.
func (r *renderer) cellWords(cell, sgr string) []word {
	sub := &renderer{src: []byte(cell), th: r.th}
	doc := mdParser().Parse(text.NewReader(sub.src))
	if b := doc.FirstChild(); b != nil && b.FirstChild() != nil {
		if b.FirstChild().Type() == ast.TypeInline {
			return sub.inlines(b, sgr)
		}
	}
	return splitWords(cell, sgr)
}

// taskMark is how many bytes of an item's first line are its task box
// ("[ ] ", "[x] "), and whether it is ticked; 0 for an item that is not
// a task.
func (r *renderer) taskMark(item ast.Node) (int, bool) {
	b := item.FirstChild()
	if b == nil || b.Lines().Len() == 0 {
		return 0, false
	}
	seg := b.Lines().At(0)
	v := seg.Value(r.src)
	if len(v) < 4 || v[0] != '[' || v[2] != ']' || !strings.ContainsRune(" xX", rune(v[1])) || v[3] != ' ' && v[3] != '\t' {
		return 0, false
	}
	n := 4
	for n < len(v) && (v[n] == ' ' || v[n] == '\t') {
		n++
	}
	return n, v[1] != ' '
}

// struck adds text with each ~~pair~~ struck through (or, in plain text,
// kept between its tildes); an unpaired ~~ is text.
func (r *renderer) struck(ws *words, v, sgr string) {
	parts := strings.Split(v, "~~")
	for i, p := range parts {
		switch {
		case i%2 == 0:
			r.linkify(ws, p, sgr)
		case i == len(parts)-1:
			ws.glue("~~", sgr)
			r.linkify(ws, p, sgr)
		case r.th.plain:
			ws.glue("~~", "")
			ws.add(p, "")
			ws.glue("~~", "")
		default:
			ws.add(p, r.th.with(sgr, r.th.strike))
		}
	}
}

// linkify adds text with each bare http(s) address in the address style,
// as GitHub links them; punctuation that ends a sentence is not the
// address's.
func (r *renderer) linkify(ws *words, s, sgr string) {
	for s != "" {
		i := bareURL(s)
		if i < 0 {
			ws.add(s, sgr)
			return
		}
		ws.add(s[:i], sgr)
		end := strings.IndexAny(s[i:], " \t\n")
		if end < 0 {
			end = len(s) - i
		}
		url := strings.TrimRight(s[i:i+end], ".,:;!?'\")")
		ws.add(url, r.th.url)
		s = s[i+len(url):]
	}
}

// bareURL is where the first address starting a word in s is, -1 if none.
func bareURL(s string) int {
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			return -1
		}
		j += i
		for _, scheme := range []string{"https", "http"} {
			k := j - len(scheme)
			if k >= 0 && s[k:j] == scheme && (k == 0 || strings.IndexByte(" \t\n(<", s[k-1]) >= 0) && j+3 < len(s) {
				return k
			}
		}
		i = j + 3
	}
	return -1
}
