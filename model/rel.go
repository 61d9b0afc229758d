package model

import (
	"fmt"
	"strings"
)

// Rel is a plan's path inside .plans/: `<lane>/<name>.md`, like
// `features/fix-login.md`. Parse one with ParseRel; make one with RelOf.
type Rel string

// ParseRel checks that s names a plan file directly inside a lane: a known
// lane, then a file name ending in .md that is not README.md and holds no
// path separator.
func ParseRel(s string) (Rel, error) {
	laneName, name, ok := strings.Cut(s, "/")
	_, known := ParseLane(laneName)
	if !ok || !known || name == "" || strings.ContainsAny(name, "/\\") || name == "." || name == ".." || !strings.HasSuffix(name, ".md") || name == "README.md" {
		return "", fmt.Errorf("%q is not a plan path like features/foo.md", s)
	}
	return Rel(s), nil
}

// RelOf is the rel of the file name in lane.
func RelOf(lane Lane, name string) Rel { return Rel(string(lane) + "/" + name) }

// Lane is the lane part; "" for a rel that does not parse.
func (r Rel) Lane() Lane {
	l, _, _ := strings.Cut(string(r), "/")
	lane, _ := ParseLane(l)
	return lane
}

// Name is the file name part.
func (r Rel) Name() string {
	_, name, _ := strings.Cut(string(r), "/")
	return name
}

// Slug is the plan's slug: its name without .local.md or .md.
func (r Rel) Slug() string { return SlugOf(r.Name()) }

// In is the same file name in another lane.
func (r Rel) In(lane Lane) Rel { return RelOf(lane, r.Name()) }

func (r Rel) String() string { return string(r) }
