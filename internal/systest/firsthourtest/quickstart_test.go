package firsthourtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// quickStart is the README's quick start: the commands of its second sh
// block (the first installs and opens the demo), comments dropped, && split.
func quickStart(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n## Quick start\n")
	if start < 0 {
		t.Fatal("README.md has no quick start")
	}
	end := start + 1 + strings.Index(text[start+1:], "\n## ")
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(text[start:end], -1)
	if len(blocks) != 2 {
		t.Fatalf("the quick start has %d sh blocks, want 2", len(blocks))
	}
	var cmds [][]string
	for _, line := range strings.Split(blocks[1][1], "\n") {
		line, _, _ = strings.Cut(line, "  #")
		for _, c := range strings.Split(line, "&&") {
			if words := shellFields(c); len(words) > 0 {
				cmds = append(cmds, words)
			}
		}
	}
	return cmds
}

// shellFields splits a command line into words as sh does for plain words
// and "quoted" or 'quoted' ones.
func shellFields(line string) []string {
	var words []string
	var word strings.Builder
	in, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words, in = append(words, word.String()), false
				word.Reset()
			}
		default:
			word.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, word.String())
	}
	return words
}

// The README's quick start works as written, on a git repository of one's
// own with a stand-in for Claude Code: scaffold, an endpoint, a plan, a
// worker that commits, review, queue and land.
func TestReadmeQuickStart(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitRepo(t)
	bin, rec := t.TempDir(), t.TempDir()
	standIn(t, bin, "claude", rec)
	env := append(pathWith(bin), "EDITOR=true", "VISUAL=")
	ran := map[string]bool{}
	for _, words := range quickStart(t) {
		line := strings.Join(words, " ")
		switch {
		case line == "$EDITOR endpoints.yaml":
			// What the reader does: turn the claude endpoint on.
			data, err := os.ReadFile(filepath.Join(dir, "endpoints.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			on := strings.Replace(text, "#endpoints:\n", "sandbox_write: ["+strconv.Quote(rec)+"]\nendpoints:\n", 1)
			on = strings.Replace(on, "#  - name: claude\n#    tier: mid\n#    model: sonnet\n#    agent: claude\n", "  - name: claude\n    tier: mid\n    model: sonnet\n    agent: claude\n", 1)
			if on == text || strings.Count(on, "agent: claude") != 1 {
				t.Fatalf("endpoints.yaml has no claude endpoint to uncomment:\n%s", text)
			}
			writeFile(t, dir, "endpoints.yaml", on)
			continue
		case words[0] != "fleetwatch":
			t.Fatalf("the quick start runs %q, which this test does not know", line)
		case len(words) == 1 || strings.HasPrefix(words[1], "--"):
			continue // the cockpit (of one project or several) needs a terminal: uitest runs it
		}
		args := words[1:]
		if strings.Contains(line, "queue land") {
			args = append(args, "--yes") // it asks, naming the commit
		}
		ran[args[0]] = true
		if r := fwtest.RunEnv(t, dir, env, args...); r.Code != 0 {
			t.Fatalf("%s: %v", line, r)
		}
	}
	for _, verb := range []string{"scaffold", "agents", "doctor", "new", "work-once", "review", "queue"} {
		if !ran[verb] {
			t.Errorf("the quick start no longer runs fleetwatch %s", verb)
		}
	}
	if !fwtest.Exists(dir, "completed/fix-login.md") {
		t.Error("the plan did not reach completed/")
	}
	// scaffold took the repository's branch, main, as the integration branch.
	if log := fwtest.GitOut(t, dir, "log", "--format=%s", "main"); !strings.Contains(log, "stand-in: work the plan") {
		t.Errorf("the agent's commit did not land on main:\n%s", log)
	}
}
