package main

import "strings"

// Words is how many words the note's body has.
func (n Note) Words() int {
	return len(strings.FieldsFunc(n.Body, func(r rune) bool { return r == ' ' || r == '\'' }))
}
