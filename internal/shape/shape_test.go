package shape

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleMeetsTheTargets checks the whole module, from its root.
func TestModuleMeetsTheTargets(t *testing.T) {
	breaches, err := Check("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range breaches {
		t.Error(b)
	}
}

// The check finds each kind of breach in a module made to have them all.
func TestCheckFindsEachBreach(t *testing.T) {
	dir := t.TempDir()
	long := "package x\n\nfunc long() {\n" + strings.Repeat("\t_ = 1\n", 80) + "}\n\nfunc table() []int {\n\treturn []int{\n" + strings.Repeat("\t\t1,\n", 90) + "\t}\n}\n"
	var fields strings.Builder
	for i := range 25 {
		fmt.Fprintf(&fields, "\tf%d int\n", i)
	}
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", "package main\n")
	write("extra.go", "package main\n")
	write("x/long.go", long)
	write("x/long_test.go", long) // tests are exempt
	write("ui/ui.go", "package ui\n\nimport \"os/exec\"\n\ntype Model struct {\n"+fields.String()+"}\n\nvar _ = exec.Command\n")
	write("x/git.go", "package x\n\nimport \"os/exec\"\n\nvar _ = exec.Command(\"git\", \"status\")\n")
	write("internal/gitenv/gitenv.go", "package gitenv\n\nimport \"os/exec\"\n\nvar _ = exec.Command(\"git\", \"status\")\n")
	got, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"extra.go: the root holds main.go only",
		"x/long.go:3: long is 82 lines",
		"ui/ui.go:5: ui.Model has 25 fields",
		"ui/ui.go: imports os/exec",
		"ui/ui.go:33: exec.Command in ui",
		"x/git.go:5: git started by exec",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d breaches, want 6 (a literal table, tests and gitenv are exempt):\n%s", len(got), all)
	}
}
