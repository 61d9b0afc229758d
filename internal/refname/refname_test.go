package refname

import "testing"

// Each of git's rules refuses its name, with its reason; names git takes
// pass.
func TestProblem(t *testing.T) {
	for name, want := range map[string]string{
		"feature/login": "",
		"fleet/w-1.lan": "",
		"":              `"" is not a branch name`,
		"@":             `"@" is not a branch name`,
		"-x":            "it starts with -",
		"a/":            "it has an empty path component",
		"/a":            "it has an empty path component",
		"a//b":          "it has an empty path component",
		"a.":            "it ends with .",
		"a..b":          "it contains ..",
		"a@{b":          "it contains @{",
		"a b":           "it contains ' '",
		"a\x01":         `it contains '\x01'`,
		"a\x7f":         `it contains '\x7f'`,
		"a~1":           "it contains '~'",
		"a:b":           "it contains ':'",
		"a\\b":          `it contains '\\'`,
		"a/.b":          "a component starts with .",
		".a":            "a component starts with .",
		"a.lock/b":      "a component ends with .lock",
		"a/b.lock":      "a component ends with .lock",
		"-a..b":         "it starts with -",
		"a..b c":        "it contains ..",
		"a b/.c":        "it contains ' '",
	} {
		if got := Problem(name); got != want {
			t.Errorf("Problem(%q) = %q, want %q", name, got, want)
		}
	}
}
