package mdterm

import (
	"strings"
	"sync"

	"github.com/yuin/goldmark/ast"
)

// codeIndent is how far a code block sits right of the text.
const codeIndent = 2

// code is a code block, highlighted when its language is known and the
// theme has colours, cut (not wrapped: code has no spaces to break at)
// at the width.
func (r *renderer) code(n ast.Node, info string, w int) []string {
	lang, _, _ := strings.Cut(strings.TrimSpace(info), " ")
	var hl *highlighter
	if !r.th.plain {
		hl = newHighlighter(lang, r.th.syntax)
	}
	src := n.Lines()
	pad := strings.Repeat(" ", codeIndent)
	var out []string
	for i := 0; i < src.Len(); i++ {
		seg := src.At(i)
		text := strings.TrimRight(string(seg.Value(r.src)), "\r\n")
		text = strings.ReplaceAll(text, "\t", "    ")
		var pieces word
		if hl != nil {
			pieces = hl.line(text)
		} else {
			pieces = word{{text, r.th.syntax.plain}}
		}
		for _, l := range cutLine(pieces, w-codeIndent) {
			out = append(out, strings.TrimRight(pad+l, " "))
		}
	}
	return out
}

// cutLine is a line of code cut into lines of at most w columns.
func cutLine(wd word, w int) []string {
	var out []string
	for {
		var head word
		if wd.width() > w && w > 0 {
			head, wd = cutWord(wd, w)
		} else {
			head, wd = wd, nil
		}
		var l line
		for _, p := range head {
			l.add(p)
		}
		out = append(out, l.String())
		if len(wd) == 0 {
			return out
		}
	}
}

// lang is what the highlighter knows of a language: its comments,
// string quotes and keywords.
type lang struct {
	lineComment  []string
	blockComment [2]string
	quotes       string
	keywords     map[string]bool
	diff         bool
}

// langs is built on the first code block drawn, never at start.
var langs = sync.OnceValue(func() map[string]*lang {
	set := func(words string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields(words) {
			m[w] = true
		}
		return m
	}
	c := [2]string{"/*", "*/"}
	goL := &lang{lineComment: []string{"//"}, blockComment: c, quotes: "\"'`", keywords: set(`break case chan const continue
		default defer else fallthrough for func go goto if import interface map package range return select struct
		switch type var nil true false iota`)}
	sh := &lang{lineComment: []string{"#"}, quotes: "\"'", keywords: set(`if then else elif fi for while until do done
		case esac in function return local export set unset exit break continue readonly shift trap source`)}
	yaml := &lang{lineComment: []string{"#"}, quotes: "\"'", keywords: set("true false null yes no on off ~")}
	json := &lang{quotes: "\"", keywords: set("true false null")}
	py := &lang{lineComment: []string{"#"}, quotes: "\"'", keywords: set(`and as assert async await break class continue
		def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try
		while with yield None True False self`)}
	js := &lang{lineComment: []string{"//"}, blockComment: c, quotes: "\"'`", keywords: set(`async await break case catch
		class const continue default delete do else export extends finally for from function if import in instanceof
		interface let new of return static super switch this throw try type typeof var void while yield null undefined
		true false enum implements private public readonly`)}
	rust := &lang{lineComment: []string{"//"}, blockComment: c, quotes: "\"", keywords: set(`as async await break const
		continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self
		static struct super trait true type unsafe use where while Some None Ok Err`)}
	diff := &lang{diff: true}
	return map[string]*lang{"go": goL, "golang": goL, "sh": sh, "bash": sh, "shell": sh, "console": sh, "zsh": sh,
		"yaml": yaml, "yml": yaml, "json": json, "python": py, "py": py, "js": js, "javascript": js, "ts": js,
		"typescript": js, "jsx": js, "tsx": js, "rust": rust, "rs": rust, "diff": diff, "patch": diff}
})

// highlighter colours one code block's lines, remembering an open block
// comment from one line to the next.
type highlighter struct {
	l         *lang
	p         palette
	inComment bool
}

// newHighlighter is nil for a language it does not know: plain code.
func newHighlighter(name string, p palette) *highlighter {
	l := langs()[strings.ToLower(name)]
	if l == nil {
		return nil
	}
	return &highlighter{l: l, p: p}
}

// line is text as coloured pieces.
func (h *highlighter) line(text string) word {
	if h.l.diff {
		return word{{text, h.diffStyle(text)}}
	}
	var out word
	add := func(s, sgr string) {
		if s != "" {
			out = append(out, piece{s, sgr})
		}
	}
	for i := 0; i < len(text); {
		if h.inComment {
			end := strings.Index(text[i:], h.l.blockComment[1])
			if end < 0 {
				add(text[i:], h.p.comment)
				return out
			}
			end += i + len(h.l.blockComment[1])
			add(text[i:end], h.p.comment)
			h.inComment, i = false, end
			continue
		}
		n, sgr := h.token(text, i)
		add(text[i:i+n], sgr)
		i += n
	}
	return out
}

// token is the length and colour of the token at text[i:].
func (h *highlighter) token(text string, i int) (int, string) {
	if n := h.comment(text, i); n > 0 {
		return n, h.p.comment
	}
	rest := text[i:]
	c := rest[0]
	switch {
	case strings.IndexByte(h.l.quotes, c) >= 0:
		return quoted(rest), h.p.str
	case c >= '0' && c <= '9':
		n := 1
		for n < len(rest) && (isWordByte(rest[n]) || rest[n] == '.') {
			n++
		}
		return n, h.p.number
	case isWordByte(c):
		return h.word(rest)
	}
	return 1, h.p.plain
}

// comment is the length of the comment opening at text[i:], to the line's
// end or (a block comment) of its opener; 0 when none opens there. A #
// opens one only after a blank: it is no comment inside a word.
func (h *highlighter) comment(text string, i int) int {
	rest := text[i:]
	for _, lc := range h.l.lineComment {
		if strings.HasPrefix(rest, lc) && (lc != "#" || i == 0 || text[i-1] == ' ' || text[i-1] == '\t') {
			return len(rest)
		}
	}
	if bc := h.l.blockComment[0]; bc != "" && strings.HasPrefix(rest, bc) {
		h.inComment = true
		return len(bc)
	}
	return 0
}

// word is the length and colour of the word at rest's start: a keyword's
// or plain.
func (h *highlighter) word(rest string) (int, string) {
	n := 1
	for n < len(rest) && isWordByte(rest[n]) {
		n++
	}
	if h.l.keywords[rest[:n]] {
		return n, h.p.keyword
	}
	return n, h.p.plain
}

// quoted is the length of the string literal at s's start: to its closing
// quote (a backslash escaping one), or the line's end.
func quoted(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if q != '`' {
				i++
			}
		case q:
			return i + 1
		}
	}
	return len(s)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func (h *highlighter) diffStyle(text string) string {
	switch {
	case strings.HasPrefix(text, "+++"), strings.HasPrefix(text, "---"), strings.HasPrefix(text, "@@"):
		return h.p.hunk
	case strings.HasPrefix(text, "+"):
		return h.p.added
	case strings.HasPrefix(text, "-"):
		return h.p.removed
	}
	return h.p.plain
}
