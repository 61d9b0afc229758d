// Package termtext makes text read from files safe to print on a terminal:
// a plan title, an agent id or a log line must not carry escape sequences
// (which could rewrite the operator's terminal) or bidirectional overrides
// (which reorder what follows on the line).
package termtext

import "strings"

// control reports the characters that must not reach a terminal from a
// file: C0 and C1 controls, DEL, and bidirectional marks and overrides.
func control(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) ||
		r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// Line makes s safe to draw on one line: controls become `?`, tabs and
// line breaks a space.
func Line(s string) string {
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
	}, s)
}
