package shape

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Each construct counts as gocyclo v0.6.0 counts it: the figures below are
// what `gocyclo` printed for this file.
func TestCycloCountsAsGocyclo(t *testing.T) {
	src := `package snip

var hook = func(a, b bool) bool { return a && b || !a }

var plain = 3

func straight() {}

func branches(xs []int, ch chan int) int {
	n := 0
	for i := 0; i < 3; i++ {
		if i > 1 && n < 5 {
			n++
		}
	}
	for range xs {
		n--
	}
	switch n {
	case 1, 2:
		n = 0
	case 3:
	default:
		n = 9
	}
	select {
	case v := <-ch:
		n += v
	default:
	}
	f := func() bool { return n > 0 || n < -3 }
	_ = f
	return n
}

type T struct{}

func (t *T) method(v any) string {
	switch v.(type) {
	case int:
		return "int"
	case string, bool:
		return "s"
	}
	return ""
}

func noBody()
`
	f, err := parser.ParseFile(token.NewFileSet(), "snip.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fn := range cycloFuncs(f) {
		got = append(got, fn.name+" "+strconv.Itoa(fn.n))
	}
	want := "hook 3, straight 1, branches 9, T.method 3, noBody 1"
	if g := strings.Join(got, ", "); g != want {
		t.Errorf("complexities %s, want %s", g, want)
	}
}

// A function over 25 is a breach, and so is a mean over the ratchet and a
// waiver no longer needed; a function of 25, a literal table, tests, the
// test kit and the demo's sample project are not.
func TestCycloFindsBreaches(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// branchy is a function of complexity n: 1 and n-1 ifs.
	branchy := func(name string, n int) string {
		return "func " + name + "(x int) {\n" + strings.Repeat("\tif x > 0 {\n\t\tx--\n\t}\n", n-1) + "}\n"
	}
	table := "func table(x int) []bool {\n\treturn []bool{" + strings.Repeat("x > 0 || ", 30) + "false}\n}\n"
	write("main.go", "package main\n\n"+branchy("over", 26)+branchy("fits", 25)+table)
	write("main_test.go", "package main\n\n"+branchy("testOver", 30))
	write("internal/testkit/kit.go", "package testkit\n\n"+branchy("kitOver", 30))
	write("ui/demo/_sample/sample.go", "package sample\n\n"+branchy("sampleOver", 30))
	write("workers/worktree.go", "package workers\n\nfunc Remove() {}\n")
	// A waiver the module's code no longer needs, to see it reported.
	cycloWaived["workers/worktree.go Remove"] = true
	defer delete(cycloWaived, "workers/worktree.go Remove")
	got := cyclo(dir)
	want := []string{
		"main.go:3: over has cyclomatic complexity 26 (at most 25): split it by what it does",
		"workers/worktree.go Remove is no longer over 25: drop it from cycloWaived",
		fmt.Sprintf("the module's mean cyclomatic complexity is 20.75 over 4 functions (at most %.2f): split what branches most", maxCycloMean),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("breaches:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Small functions make no breach: the mean stays under the ratchet.
func TestCycloPassesSmallFunctions(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {\n\tif true {\n\t}\n}\n\nfunc other() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := cyclo(dir); len(got) > 0 {
		t.Errorf("breaches %q, want none (mean 1.5)", got)
	}
}
