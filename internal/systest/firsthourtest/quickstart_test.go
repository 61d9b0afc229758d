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

// quickStart is the README's quick start: the commands of its first sh
// block after "# then, in a git repository of your own:" (the lines before
// install and open the demo), and those of its second, the forge variant;
// comments dropped, && split.
func quickStart(t *testing.T) (own, forge [][]string) {
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
	_, mine, ok := strings.Cut(blocks[0][1], "# then, in a git repository of your own:\n")
	if !ok {
		t.Fatal("the quick start's first block has no \"# then, in a git repository of your own:\" line")
	}
	return commands(mine), commands(blocks[1][1])
}

// commands are a block's command lines, comments dropped, && split.
func commands(block string) [][]string {
	var cmds [][]string
	for _, line := range strings.Split(block, "\n") {
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
	own, _ := quickStart(t)
	dir := fwtest.GitRepo(t)
	runQuickStart(t, dir, own, nil, nil)
}

// runQuickStart runs cmds in dir as the reader would, then checks the plan
// landed on main; extra is added to every command's environment, and an
// `echo TEXT >> fleetwatch.yaml` appends TEXT as edit makes it.
func runQuickStart(t *testing.T, dir string, cmds [][]string, extra []string, edit *strings.Replacer) {
	t.Helper()
	bin, rec := t.TempDir(), t.TempDir()
	standIn(t, bin, "claude", rec)
	env := append(append(pathWith(bin), "EDITOR=true", "VISUAL="), extra...)
	ran := map[string]bool{}
	for _, words := range cmds {
		line := strings.Join(words, " ")
		switch {
		case line == "$EDITOR endpoints.yaml":
			turnClaudeOn(t, dir, rec)
			continue
		case edit != nil && words[0] == "echo" && len(words) == 4 && words[2] == ">>" && words[3] == "fleetwatch.yaml":
			appendFile(t, filepath.Join(dir, "fleetwatch.yaml"), edit.Replace(words[1])+"\n")
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

// turnClaudeOn is what the reader does in $EDITOR endpoints.yaml: the
// claude endpoint on, and the stand-in's record folder granted.
func turnClaudeOn(t *testing.T, dir, rec string) {
	t.Helper()
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
}
