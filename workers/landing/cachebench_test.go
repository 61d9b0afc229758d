package landing

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs"
)

// libFiles is a small library: three packages with tests, importing a
// fair part of the standard library, as a real one does.
var libFiles = map[string]string{
	"go.mod":              "module example.com/lib\n\ngo 1.22\n",
	"text/text.go":        "package text\n\nimport (\n\t\"strings\"\n\t\"unicode\"\n)\n\n// Words splits s into words.\nfunc Words(s string) []string {\n\treturn strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })\n}\n",
	"text/text_test.go":   "package text\n\nimport \"testing\"\n\nfunc TestWords(t *testing.T) {\n\tif got := Words(\"a, b c\"); len(got) != 3 {\n\t\tt.Fatal(got)\n\t}\n}\n",
	"count/count.go":      "package count\n\nimport (\n\t\"encoding/json\"\n\t\"sort\"\n\n\t\"example.com/lib/text\"\n)\n\n// JSON counts the words of s, as JSON.\nfunc JSON(s string) string {\n\tm := map[string]int{}\n\tfor _, w := range text.Words(s) {\n\t\tm[w]++\n\t}\n\tkeys := make([]string, 0, len(m))\n\tfor k := range m {\n\t\tkeys = append(keys, k)\n\t}\n\tsort.Strings(keys)\n\tb, _ := json.Marshal(m)\n\treturn string(b)\n}\n",
	"count/count_test.go": "package count\n\nimport \"testing\"\n\nfunc TestJSON(t *testing.T) {\n\tif got := JSON(\"a a b\"); got != `{\"a\":2,\"b\":1}` {\n\t\tt.Fatal(got)\n\t}\n}\n",
	"serve/serve.go":      "package serve\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n\n\t\"example.com/lib/count\"\n)\n\n// Handler answers with the count of the query's words.\nfunc Handler(w http.ResponseWriter, r *http.Request) {\n\tfmt.Fprint(w, count.JSON(r.URL.Query().Get(\"q\")))\n}\n",
	"serve/serve_test.go": "package serve\n\nimport (\n\t\"net/http/httptest\"\n\t\"testing\"\n)\n\nfunc TestHandler(t *testing.T) {\n\tw := httptest.NewRecorder()\n\tHandler(w, httptest.NewRequest(\"GET\", \"/?q=x+x\", nil))\n\tif w.Body.String() != `{\"x\":2}` {\n\t\tt.Fatal(w.Body.String())\n\t}\n}\n",
}

// libProject is a project whose dev holds libFiles and fleetwatch.yaml
// (settings plus a check running the library's own go test ./...), with
// n approved, queued changes, each adding a function to text.
func libProject(tb testing.TB, n int, settings string) (*planfs.Tree, []string) {
	tb.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		tb.Skip("no go on PATH")
	}
	dir := tb.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		tb.Fatal(err)
	}
	gitc := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, body string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	yaml := "integration: dev\nchecks:\n  - {name: test, run: [go, test, ./...], env: {GOFLAGS: ''}}\n" + settings
	gitc("init", "-q", "-b", "dev")
	write(".gitignore", "var/\n.plans/\n")
	write("fleetwatch.yaml", yaml)
	for name, body := range libFiles {
		write(name, body)
	}
	gitc("add", ".")
	gitc("commit", "-q", "-m", "lib")
	slugs := make([]string, n)
	for i := range slugs {
		slugs[i] = fmt.Sprintf("c%03d", i)
		gitc("checkout", "-q", "-b", "feature/"+slugs[i], "dev")
		write(fmt.Sprintf("text/f%d.go", i), fmt.Sprintf("package text\n\n// F%d is change %d.\nfunc F%d() int { return %d }\n", i, i, i, i))
		gitc("add", ".")
		gitc("commit", "-q", "-m", slugs[i])
		write(".plans/review-needed/"+slugs[i]+".md", fmt.Sprintf("# Plan: %s\n\n## Goal\nDo it.\n", slugs[i]))
	}
	gitc("checkout", "-q", "dev")
	t, err := planfs.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	approveAndQueue(tb, t, slugs)
	return t, slugs
}

func landTimed(tb testing.TB, t *planfs.Tree) time.Duration {
	tb.Helper()
	start := time.Now()
	var log strings.Builder
	if _, err := Land(context.Background(), t, LandOptions{Actor: "operator-bench", Log: &log}); err != nil {
		tb.Fatalf("land: %v\n%s", err, log.String())
	}
	return time.Since(start)
}

// BenchmarkGoCheckLanding is a gated landing of a small library whose
// check is its own go test ./...: cold (an empty cache, as before the
// trusted layer: checks_cache: {go: false}), warm from the trusted layer
// alone (the previous landing's trusted build promoted; the operator's
// GOCACHE not read), warm with the operator's GOCACHE read (the first
// landing of a project), against the operator's own go test ./... in a
// plain checkout after the same change, with a warm GOCACHE (target:
// warm landing ≤ 1.5× that).
func BenchmarkGoCheckLanding(b *testing.B) {
	needSandbox(b)
	for b.Loop() {
		t, _ := libProject(b, 1, "checks_cache: {go: false}\n")
		b.ReportMetric(landTimed(b, t).Seconds(), "s/cold-landing")

		t, _ = libProject(b, 2, "checks_cache: {operator_go_cache: false}\n")
		first := landTimed(b, t)
		b.ReportMetric(first.Seconds(), "s/first-landing-no-operator-cache")
		b.ReportMetric(landTimed(b, t).Seconds(), "s/warm-landing-trusted")

		t, _ = libProject(b, 1, "")
		b.ReportMetric(landTimed(b, t).Seconds(), "s/first-landing-operator-cache")

		b.ReportMetric(operatorWarm(b, t.Project).Seconds(), "s/operator-warm-go-test")
	}
}

// operatorWarm is the operator's own go test ./... in a plain checkout
// with their warm GOCACHE, after a change like a candidate's.
func operatorWarm(tb testing.TB, dir string) time.Duration {
	run := func() time.Duration {
		start := time.Now()
		cmd := exec.Command("go", "test", "./...")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("go test: %v\n%s", err, out)
		}
		return time.Since(start)
	}
	run()
	os.WriteFile(filepath.Join(dir, "text", "op.go"), []byte("package text\n\n// Op is the operator's change.\nfunc Op() int { return 1 }\n"), 0o644)
	return run()
}
