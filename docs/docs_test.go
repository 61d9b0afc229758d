package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every topic has its page, and every page is a topic: a page nobody can
// reach with `help` is a page nobody reads in a terminal.
func TestTopicsArePages(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(f, ".md"))
	}
	want := slices.Clone(Topics)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("pages %v, topics %v", names, want)
	}
	for _, topic := range Topics {
		if text, _ := Page(topic); !strings.HasPrefix(text, "#") {
			t.Errorf("%s.md does not start with its heading", topic)
		}
	}
	if _, ok := Page("nope"); ok {
		t.Error("a page for an unknown topic")
	}
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile("(?m)^#{1,6} (.+)$")
	fence   = regexp.MustCompile("(?ms)^```.*?^```")
)

// anchorOf is GitHub's anchor for a heading.
func anchorOf(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = strings.Map(func(r rune) rune {
		switch {
		case r == ' ':
			return '-'
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z':
			return r
		}
		return -1
	}, h)
	return h
}

func anchors(t *testing.T, path string) map[string]bool {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(string(data), ""), -1) {
		out[anchorOf(m[1])] = true
	}
	return out
}

// Every relative link of the README and the pages reaches a file, and its
// #anchor a heading there: moving text between pages must not strand a link.
func TestLinksResolve(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	files = append(files, "../README.md")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := f
			if file != "" {
				dest = filepath.Join(filepath.Dir(f), file)
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s: link %s: %v", f, target, err)
				continue
			}
			if anchor != "" && !anchors(t, dest)[anchor] {
				t.Errorf("%s: link %s: no heading #%s in %s", f, target, anchor, dest)
			}
		}
	}
}

// The README stays a front page: under 300 lines, starting with the two
// commands that work on a fresh clone.
func TestReadmeShape(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if n := strings.Count(text, "\n"); n >= 300 {
		t.Errorf("README.md has %d lines, want under 300", n)
	}
	if !strings.HasPrefix(text, "# fleetwatch\n\n```sh\ngo run . demo ") || !strings.Contains(text[:200], "\ngo test ./...") {
		t.Errorf("README.md no longer starts with `go run . demo` and `go test ./...`:\n%s", text[:200])
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`\ngo test -race -count=1 (-p 1 )?\./\.\.\. `).Match(ci) {
		t.Error(".ci/run no longer runs the README's test command (go test ./..., with -race)")
	}
	start := strings.Index(text, "\n## Quick start\n")
	if start < 0 || strings.Contains(text[:start], "\n## ") {
		t.Fatal("README.md does not start with a Quick start section")
	}
	end := start + 1 + strings.Index(text[start+1:], "\n## ")
	if n := strings.Count(text[start:end], "\n"); n > 30 {
		t.Errorf("the quick start is %d lines, want at most 30", n)
	}
}
