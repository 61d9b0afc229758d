package model

import (
	"path"
	"slices"
	"strings"
)

// Scope is the files a build may touch: the `## Files in scope` section of
// a plan or an approved proposal (anchor's format: one path or glob per
// line, `*` within a segment, `**` across segments, a trailing `/` a whole
// subtree), plus the plan's `Allowed generated files`.
type Scope struct {
	Patterns []string
	// Allowed are generated files a build may touch outside Patterns.
	Allowed []string
}

// ScopeSection is the heading that declares a scope.
const ScopeSection = "files in scope"

// ParseScope reads the `## Files in scope` section of text. found is false
// when there is no such section; a section with no line in it is a scope
// that allows nothing. Bullets (`- `, `* `) and backticks around a path are
// dropped; a pattern path.Match refuses is a warning, and left out.
func ParseScope(text string) (s Scope, found bool, warnings []Warning) {
	in := false
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if level, title, ok := heading(line); ok {
			if level <= 2 {
				in = level == 2 && strings.HasPrefix(strings.ToLower(title), ScopeSection)
				found = found || in
			}
			continue
		}
		if !in {
			continue
		}
		p := scopeLine(line)
		if p == "" {
			continue
		}
		if err := checkGlob(p); err != "" {
			warnings = append(warnings, Warning{Line: i + 1, Message: "scope pattern " + quote(p) + ": " + err})
			continue
		}
		s.Patterns = append(s.Patterns, p)
	}
	return s, found, warnings
}

// scopeLine is the pattern on one line of the section, "" for none.
func scopeLine(line string) string {
	t := strings.TrimSpace(line)
	for _, b := range []string{"- ", "* ", "+ "} {
		t = strings.TrimSpace(strings.TrimPrefix(t, b))
	}
	if i := strings.Index(t, " #"); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	t = strings.Trim(t, "`")
	return strings.TrimPrefix(t, "./")
}

// checkGlob says what is wrong with a pattern, "" when nothing.
func checkGlob(p string) string {
	if strings.HasPrefix(p, "/") {
		return "paths are relative to the repository, not absolute"
	}
	for _, seg := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
		if seg == ".." {
			return "`..` leaves the repository"
		}
		if _, err := path.Match(seg, ""); err != nil {
			return err.Error()
		}
	}
	return ""
}

// Allows reports whether the repository path p (slash-separated, relative)
// is in the scope or among its allowed generated files.
func (s Scope) Allows(p string) bool {
	return slices.ContainsFunc(s.Patterns, func(g string) bool { return MatchGlob(g, p) }) ||
		slices.ContainsFunc(s.Allowed, func(g string) bool { return MatchGlob(g, p) })
}

// PlansDir is the folder only fleetwatch moves files in: an agent touching
// it is out of scope whatever its scope says.
const PlansDir = ".plans"

// Violations are the paths of touched that s does not allow, plus any under
// .plans/ (with or without a scope), sorted and without repeats. A nil s
// means no declared scope: only .plans/ is checked.
func (s *Scope) Violations(touched []string) []string {
	var out []string
	for _, p := range touched {
		if p == PlansDir || strings.HasPrefix(p, PlansDir+"/") || (s != nil && !s.Allows(p)) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// MatchGlob matches a scope pattern against a slash-separated path: `*`,
// `?` and `[…]` within one segment as path.Match, `**` any number of whole
// segments, and a pattern ending in `/` everything below it.
func MatchGlob(pattern, p string) bool {
	if strings.HasSuffix(pattern, "/") {
		pattern += "**"
	}
	// Runs of `**` are one: each more would multiply the work.
	pat := slices.CompactFunc(strings.Split(pattern, "/"), func(a, b string) bool { return a == "**" && b == "**" })
	return matchSegs(pat, strings.Split(p, "/"))
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
