package mdterm

// theme is one style's colours (SGR parameters) and marks. Plain themes
// have no colours: emphasis keeps the source's marks instead.
type theme struct {
	plain bool

	text, h1, heading, strike, code, link, url, image, quote, rule string
	tableHead                                                      string

	bullet, ticked, unticked, quoteBar string
	colSep, rowRule, cross, ellipsis   string

	syntax palette
}

// palette colours highlighted code by token class.
type palette struct {
	plain, comment, keyword, str, number, added, removed, hunk string
}

// themeOf is the named style; an unknown name is NoTTY. Built per call
// (a few strings), so no table exists before a first render.
func themeOf(name string) *theme {
	switch name {
	case Dark:
		return &theme{
			text: "38;5;252", h1: "38;5;228;48;5;63;1", heading: "38;5;39;1", strike: "9",
			code: "38;5;203", link: "38;5;35;1", url: "38;5;30;4", image: "38;5;212", quote: "38;5;252", rule: "38;5;240",
			tableHead: "38;5;252;1",
			bullet:    "• ", ticked: "[✓] ", unticked: "[ ] ", quoteBar: "│ ",
			colSep: " │ ", rowRule: "─", cross: "─┼─", ellipsis: "…",
			syntax: palette{plain: "38;5;251", comment: "38;5;241", keyword: "38;5;39", str: "38;5;173", number: "38;5;85",
				added: "38;5;42", removed: "38;5;203", hunk: "38;5;39"},
		}
	case Light:
		return &theme{
			text: "38;5;234", h1: "38;5;228;48;5;63;1", heading: "38;5;27;1", strike: "9",
			code: "38;5;203", link: "38;5;36;1", url: "38;5;30;4", image: "38;5;205", quote: "38;5;234", rule: "38;5;249",
			tableHead: "38;5;234;1",
			bullet:    "• ", ticked: "[✓] ", unticked: "[ ] ", quoteBar: "│ ",
			colSep: " │ ", rowRule: "─", cross: "─┼─", ellipsis: "…",
			syntax: palette{plain: "38;5;236", comment: "38;5;242", keyword: "38;5;27", str: "38;5;130", number: "38;5;29",
				added: "38;5;28", removed: "38;5;160", hunk: "38;5;27"},
		}
	case ASCII:
		return &theme{plain: true, bullet: "* ", ticked: "[x] ", unticked: "[ ] ", quoteBar: "| ",
			colSep: " | ", rowRule: "-", cross: "-|-", ellipsis: "~"}
	}
	return &theme{plain: true, bullet: "• ", ticked: "[x] ", unticked: "[ ] ", quoteBar: "│ ",
		colSep: " │ ", rowRule: "─", cross: "─┼─", ellipsis: "…"}
}

// with is style base with parameters add, none in a plain theme.
func (t *theme) with(base, add string) string {
	switch {
	case t.plain:
		return ""
	case base == "":
		return add
	}
	return base + ";" + add
}

// paint is s in style sgr (nothing in a plain theme: its styles are "").
func (t *theme) paint(sgr, s string) string { return paint(sgr, s) }
