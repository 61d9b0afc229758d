// Package termtext makes text read from files safe to print on a terminal:
// a plan title, an agent id or a log line must not carry escape sequences
// (which could rewrite the operator's terminal) or bidirectional overrides
// (which reorder what follows on the line).
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// control reports the characters that must not reach a terminal from a
// file: C0 and C1 controls, DEL, and bidirectional marks and overrides.
func control(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) ||
		r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// Line makes s safe to draw on one line: controls become `?`, tabs and
// line breaks a space, and so do bytes that are not UTF-8 (a lone 0x9b is
// CSI to a terminal reading 8-bit controls).
func Line(s string) string {
	s = valid(s)
	if strings.IndexFunc(s, control) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case control(r):
			return '?'
		}
		return r
	}, s)
}

// Block is Line for a whole document: line breaks and tabs stay.
func Block(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && control(r) {
			return '?'
		}
		return r
	}, valid(s))
}

// valid is s with each run of bytes that are not UTF-8 as `?`.
func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "?")
}

// JSON escapes, in encoded JSON, the controls a terminal would act on that
// encoding/json leaves raw (DEL, C1 controls, bidirectional marks): they
// become \uXXXX, so the document keeps every character and still decodes to
// the same values. They only ever occur inside strings.
func JSON(doc []byte) []byte {
	raw := func(r rune) bool { return r >= 0x7f && control(r) }
	s := string(doc)
	if strings.IndexFunc(s, raw) < 0 {
		return doc
	}
	var b strings.Builder
	for _, r := range s {
		if raw(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return []byte(b.String())
}
