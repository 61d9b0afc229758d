package mdterm

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// Each element in plain text, exactly: the margin, the marks, the
// spacing between blocks.
func TestRenderNoTTY(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"headings", "# One\n\n## Two\n\n###### Six", "  # One\n\n  ## Two\n\n  ###### Six"},
		{"setext heading", "Title\n=====", "  # Title"},
		{"paragraphs", "one\ntwo\n\nthree", "  one two\n\n  three"},
		{"emphasis", "*a* **b** ~~c~~ _d_", "  *a* **b** ~~c~~ *d*"},
		{"unpaired tildes", "a ~~ b", "  a ~~ b"},
		{"inline code", "run `go test` now", "  run go test now"},
		{"link", "see [the docs](https://x.example) now", "  see the docs https://x.example now"},
		{"link to itself", "[https://x.example](https://x.example)", "  https://x.example"},
		{"autolink", "<https://x.example>.", "  https://x.example."},
		{"image", "![a cat](cat.png)", "  Image: a cat → cat.png"},
		{"entities and escapes", "&amp; &#65; \\*x\\*", "  & A *x*"},
		{"hard break", "one  \ntwo", "  one\n  two"},
		{"bullets", "- a\n- b\n  - c\n- d", "  • a\n  • b\n    • c\n  • d"},
		{"loose list", "- a\n\n- b", "  • a\n\n  • b"},
		{"ordered", "3. a\n4. b", "  3. a\n  4. b"},
		{"ordered paren", "1) a\n2) b", "  1) a\n  2) b"},
		{"item with paragraphs", "1. one\n\n   more\n2. two", "  1. one\n\n     more\n\n  2. two"},
		{"tasks", "- [ ] open\n- [x] done\n- [X] Done", "  [ ] open\n  [x] done\n  [x] Done"},
		{"not a task", "- [link] x", "  • [link] x"},
		{"quote", "> a\n> b\n>\n> - c", "  │ a b\n  │\n  │ • c"},
		{"rule", "a\n\n---\n\nb", "  a\n\n  --------\n\n  b"},
		{"fenced code", "```go\nx := 1\n\tif x {}\n```", "    x := 1\n        if x {}"},
		{"indented code", "    a\n    b", "    a\n    b"},
		{"html block", "<div>\nhi\n</div>", "  <div>\n  hi\n  </div>"},
		{"inline html", "a <b>c</b>", "  a <b>c</b>"},
		{"table", "| a | bb |\n|---|---:|\n| 1 | 2 |", "  a │ bb\n  ──┼───\n  1 │  2"},
		{"table centred, escaped pipe, code", "| x | y |\n|:-:|:--|\n| `p|q` | \\| |", "   x  │ y\n  ────┼──\n  p|q │ |"},
		{"table under a line", "intro\n| a |\n|---|\n| b |", "  intro\n\n  a\n  ─\n  b"},
		{"no table without pipes", "a\nb", "  a b"},
	} {
		got := Render(c.src, NoTTY, 60)
		if got != c.want {
			t.Errorf("%s:\n%s\ngot:\n%q\nwant:\n%q", c.name, c.src, got, c.want)
		}
	}
}

// ASCII keeps to ASCII marks.
func TestRenderASCII(t *testing.T) {
	got := Render("- a\n- [x] b\n\n> q\n\n| a | b |\n|---|---|\n| 1 | 2 |", ASCII, 40)
	want := "  * a\n  [x] b\n\n  | q\n\n  a | b\n  --|--\n  1 | 2"
	if got != want {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
	for _, r := range got {
		if r > 127 {
			t.Errorf("%q in ASCII output:\n%s", r, got)
		}
	}
}

// Lines wrap at the width, margins included, words whole unless one is
// wider than a line; a table narrows its widest column and cuts its cells.
func TestRenderWraps(t *testing.T) {
	got := Render("one two three four five six seven\n\nabcdefghijklmnopqrstuvwxyz", NoTTY, 20)
	want := "  one two three\n  four five six\n  seven\n\n  abcdefghijklmnop\n  qrstuvwxyz"
	if got != want {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
	got = Render("| name | note |\n|---|---|\n| a | a long note that will not fit |", NoTTY, 24)
	want = "  name │ note\n  ─────┼──────────────\n  a    │ a long note…"
	if got != want {
		t.Errorf("table got:\n%q\nwant:\n%q", got, want)
	}
	long := strings.Repeat("word **strong** `code` [l](https://x.example/a/long/path) ", 40)
	for _, style := range []string{Dark, Light, NoTTY, ASCII} {
		for _, w := range []int{20, 33, 80} {
			src := "# " + long + "\n\n" + long + "\n\n- " + long + "\n\n> " + long + "\n\n```go\n" + long + "\n```\n"
			for i, l := range strings.Split(Render(src, style, w), "\n") {
				if n := ansi.StringWidth(l); n > w {
					t.Fatalf("%s at %d: line %d is %d wide: %q", style, w, i, n, l)
				}
			}
		}
	}
}

// The dark style's look: glamour's colours, a band for the title, each
// line's styles closed on that line (a pane draws lines one by one).
func TestRenderDark(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"title", "# Hi there", "  \x1b[38;5;228;48;5;63;1m Hi there \x1b[0m"},
		{"heading", "## Steps", "  \x1b[38;5;39;1m## Steps\x1b[0m"},
		{"text", "a *b* **c** ~~d~~ `e`",
			"  \x1b[38;5;252ma \x1b[0m\x1b[38;5;252;3mb\x1b[0m\x1b[38;5;252m \x1b[0m\x1b[38;5;252;1mc\x1b[0m\x1b[38;5;252m \x1b[0m" +
				"\x1b[38;5;252;9md\x1b[0m\x1b[38;5;252m \x1b[0m\x1b[38;5;203me\x1b[0m"},
		{"link", "[x](https://u.example)", "  \x1b[38;5;35;1mx\x1b[0m\x1b[38;5;252m \x1b[0m\x1b[38;5;30;4mhttps://u.example\x1b[0m"},
		{"bullet", "- a", "  \x1b[38;5;252m• \x1b[0m\x1b[38;5;252ma\x1b[0m"},
		{"go code", "```go\n// hi\nreturn \"s\", 42\n```",
			"    \x1b[38;5;241m// hi\x1b[0m\n    \x1b[38;5;39mreturn\x1b[0m\x1b[38;5;251m \x1b[0m\x1b[38;5;173m\"s\"\x1b[0m\x1b[38;5;251m, \x1b[0m\x1b[38;5;85m42\x1b[0m"},
		{"unknown language", "```cobol\nMOVE A\n```", "    \x1b[38;5;251mMOVE A\x1b[0m"},
		{"diff", "```diff\n+a\n-b\n```", "    \x1b[38;5;42m+a\x1b[0m\n    \x1b[38;5;203m-b\x1b[0m"},
		{"rule", "---", "  \x1b[38;5;240m--------\x1b[0m"},
		{"bare address", "see https://u.example/a.",
			"  \x1b[38;5;252msee \x1b[0m\x1b[38;5;30;4mhttps://u.example/a\x1b[0m\x1b[38;5;252m.\x1b[0m"},
		{"not an address", "xhttps://u and http://", "  \x1b[38;5;252mxhttps://u and http://\x1b[0m"},
	} {
		got := Render(c.src, Dark, 60)
		if got != c.want {
			t.Errorf("%s:\ngot:\n%q\nwant:\n%q", c.name, got, c.want)
		}
	}
	wrapped := strings.Split(Render("**"+strings.TrimSpace(strings.Repeat("bold words ", 10))+"**", Dark, 30), "\n")
	for i, l := range wrapped {
		if !strings.HasPrefix(l, "  \x1b[38;5;252;1m") || !strings.HasSuffix(l, "\x1b[0m") {
			t.Errorf("line %d of wrapped bold text does not open and close its style: %q", i, l)
		}
	}
}

// The highlighter: each language's comments, strings, numbers and
// keywords; a block comment carries over lines.
func TestHighlight(t *testing.T) {
	p := palette{plain: "P", comment: "C", keyword: "K", str: "S", number: "N"}
	for _, c := range []struct{ lang, line, want string }{
		{"go", `if x == "a\"b" { return 0x1F } // done`, `K:if|P: x == |S:"a\"b"|P: { |K:return|P: |N:0x1F|P: } |C:// done`},
		{"bash", `echo "$HOME" # note`, `P:echo |S:"$HOME"|P: |C:# note`},
		{"sh", `a#b`, `P:a#b`},
		{"yaml", `key: true # c`, `P:key: |K:true|P: |C:# c`},
		{"json", `{"a": null, "b": 1.5}`, `P:{|S:"a"|P:: |K:null|P:, |S:"b"|P:: |N:1.5|P:}`},
		{"python", `def f(): return 'x'`, `K:def|P: f(): |K:return|P: |S:'x'`},
		{"ts", "const s = `t`;", "K:const|P: s = |S:`t`|P:;"},
		{"rust", `fn main() { let x = 1; }`, `K:fn|P: main() { |K:let|P: x = |N:1|P:; }`},
	} {
		h := newHighlighter(c.lang, p)
		if h == nil {
			t.Fatalf("no highlighter for %s", c.lang)
		}
		var parts []string
		for _, pc := range h.line(c.line) {
			parts = append(parts, pc.sgr+":"+pc.s)
		}
		if got := strings.Join(merge(parts), "|"); got != c.want {
			t.Errorf("%s %q:\ngot  %s\nwant %s", c.lang, c.line, got, c.want)
		}
	}
	h := newHighlighter("go", p)
	h.line("a /* open")
	if got := h.line("still */ b"); len(got) < 2 || got[0].sgr != "C" || got[0].s != "still */" {
		t.Errorf("a block comment does not carry over: %v", got)
	}
	if newHighlighter("cobol", p) != nil {
		t.Error("a highlighter for an unknown language")
	}
}

// merge joins neighbouring parts of one class, as a drawn line does.
func merge(parts []string) []string {
	var out []string
	for _, p := range parts {
		cls, s, _ := strings.Cut(p, ":")
		if n := len(out); n > 0 && strings.HasPrefix(out[n-1], cls+":") {
			out[n-1] += s
			continue
		}
		out = append(out, cls+":"+s)
	}
	return out
}

// Sessions of a server render at once: one parser serves them all.
func TestRenderConcurrent(t *testing.T) {
	src := "# T\n\n- a *b*\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n```go\nfunc f() {}\n```\n"
	want := Render(src, Dark, 40)
	done := make(chan string)
	for range 8 {
		go func() { done <- Render(src, Dark, 40) }()
	}
	for range 8 {
		if got := <-done; got != want {
			t.Errorf("a concurrent render differs:\n%q\nwant\n%q", got, want)
		}
	}
}
