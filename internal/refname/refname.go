// Package refname holds git's rules for ref names (check-ref-format), so
// every floor can refuse a name git would refuse without running git.
package refname

import (
	"fmt"
	"strings"
)

// Problem applies git's check-ref-format rules to a ref or branch name. It
// returns "" when git would take the name, else why not.
func Problem(name string) string {
	if why := wholeProblem(name); why != "" {
		return why
	}
	if why := byteProblem(name); why != "" {
		return why
	}
	return componentProblem(name)
}

// wholeProblem is what git refuses in the name as a whole: empty or @, a
// leading -, an empty component, a trailing ., .. or @{.
func wholeProblem(name string) string {
	switch {
	case name == "" || name == "@":
		return fmt.Sprintf("%q is not a branch name", name)
	case strings.HasPrefix(name, "-"):
		return "it starts with -"
	case strings.HasSuffix(name, "/") || strings.HasPrefix(name, "/") || strings.Contains(name, "//"):
		return "it has an empty path component"
	case strings.HasSuffix(name, "."):
		return "it ends with ."
	case strings.Contains(name, ".."):
		return "it contains .."
	case strings.Contains(name, "@{"):
		return "it contains @{"
	}
	return ""
}

// byteProblem names the first byte git refuses anywhere in a name:
// control characters, space and ~^:?*[\.
func byteProblem(name string) string {
	for _, c := range []byte(name) {
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return fmt.Sprintf("it contains %q", c)
		}
	}
	return ""
}

// componentProblem is what git refuses in one /-separated component: a
// leading . or a trailing .lock.
func componentProblem(name string) string {
	for _, part := range strings.Split(name, "/") {
		switch {
		case strings.HasPrefix(part, "."):
			return "a component starts with ."
		case strings.HasSuffix(part, ".lock"):
			return "a component ends with .lock"
		}
	}
	return ""
}
