package shape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	write("workers/long.go", long)
	write("workers/long_test.go", long) // tests are exempt
	write("claims/claims.go", "package claims\n")
	write("model/up.go", "package model\n\nimport _ \"github.com/fleetwatch/fleetwatch/planfs\"\n")
	write("internal/low/low.go", "package low\n\nimport _ \"github.com/fleetwatch/fleetwatch/model\"\n")
	write("internal/systest/wholetest/fleet.go", "package wholetest\n\nimport _ \"github.com/fleetwatch/fleetwatch/ui/cli\"\n") // test support drives the house
	write("internal/tool/main.go", "package main\n\nimport _ \"github.com/fleetwatch/fleetwatch/ui/cli\"\n")                    // a program (the release) describes the house
	write("ui/cli/uicmd.go", "package cli\n\nimport (\n\t_ \"github.com/fleetwatch/fleetwatch/ui\"\n\t_ \"os/exec\"\n)\n")      // the command that starts the cockpit, which may start processes
	write("ui/cli/board.go", "package cli\n\nimport _ \"github.com/fleetwatch/fleetwatch/ui\"\n")
	write("ui/ui.go", "package ui\n\nimport \"os/exec\"\n\ntype Model struct {\n"+fields.String()+"}\n\nvar _ = exec.Command\n")
	write("workers/git.go", "package x\n\nimport \"os/exec\"\n\nvar _ = exec.Command(\"git\", \"status\")\n")
	write("internal/gitenv/gitenv.go", "package gitenv\n\nimport \"os/exec\"\n\nvar _ = exec.Command(\"git\", \"status\")\n")
	write("workers/status.go", "package x\n\nvar _ = gitenv.Command(nil, \"\", \"status\")\n")
	write("ui/demo/agent.go", "package demo\n\nvar _ = gitenv.Command(nil, \"\", \"status\")\n") // plays an agent
	got, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"extra.go: the root holds main.go only",
		"workers/long.go:3: long is 82 lines",
		"claims/: the root holds main.go, the card's folders and internal/",
		"model/up.go: imports github.com/fleetwatch/fleetwatch/planfs, which sits above it",
		"internal/low/low.go: imports github.com/fleetwatch/fleetwatch/model, which sits above it",
		"ui/cli/board.go: imports the cockpit (github.com/fleetwatch/fleetwatch/ui): only ui/cli/uicmd.go, which starts it, may",
		"ui/ui.go:5: ui.Model has 25 fields",
		"ui/ui.go: imports os/exec",
		"ui/ui.go:33: exec.Command in ui",
		"workers/git.go:5: git started by exec: run git through gitenv.Run",
		"workers/status.go:3: gitenv.Command: run git through gitenv.Run",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	if len(got) != 11 {
		t.Errorf("%d breaches, want 11 (a literal table, tests, test support, gitenv, the demo's agent and the commands under ui are exempt):\n%s", len(got), all)
	}
}

// A command body of 41 lines is a breach, whether a leaf's setup returns it
// or cobra's RunE holds it; one of 40 lines is not.
func TestCheckFindsLongCommandBodies(t *testing.T) {
	dir := t.TempDir()
	// bodyLit is a body closure of n lines, its first and last included.
	bodyLit := func(n int) string {
		return "func(pos []string, stdout, stderr io.Writer) int {\n" + strings.Repeat("\t_ = 1\n", n-3) + "\treturn 0\n}"
	}
	runLit := func(n int) string {
		return "func(c *cobra.Command, args []string) error {\n" + strings.Repeat("\t_ = 1\n", n-3) + "\treturn nil\n}"
	}
	src := "package cli\n\n" +
		"func longCmd() *cobra.Command {\n\treturn leaf(\"long\", \"\", func(fs *pflag.FlagSet) body {\n\t\treturn " + bodyLit(41) + "\n\t})\n}\n\n" +
		"func fitCmd() *cobra.Command {\n\treturn leaf(\"fit\", \"\", func(fs *pflag.FlagSet) body {\n\t\treturn " + bodyLit(40) + "\n\t})\n}\n\n" +
		"func setup(fs *pflag.FlagSet) body {\n\treturn " + bodyLit(41) + "\n}\n\n" +
		"func runCmd() *cobra.Command {\n\treturn &cobra.Command{Use: \"run\", RunE: " + runLit(41) + "}\n}\n\n" +
		"func assignedCmd() *cobra.Command {\n\tcmd := &cobra.Command{}\n\tcmd.RunE = " + runLit(41) + "\n\treturn cmd\n}\n\n" +
		// Not a command: an ordinary closure may be longer.
		"func helper() func() int {\n\treturn " + strings.Replace(bodyLit(50), "func(pos []string, stdout, stderr io.Writer) int", "func() int", 1) + "\n}\n"
	p := filepath.Join(dir, "ui", "cli", "cmds.go")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"ui/cli/cmds.go:5: a command body in longCmd is 41 lines (at most 40)",
		"in setup is 41 lines",
		"in runCmd is 41 lines",
		"in assignedCmd is 41 lines",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	if len(got) != 4 {
		t.Errorf("%d breaches, want 4 (a 40-line body and a closure that is no command are fine):\n%s", len(got), all)
	}
}

// ui's registry is read as it is: every entry names a pane package's New
// or a pane still in the root, so the pane rules hold of them all.
func TestTheRegistryIsRead(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("../../ui/*.go")
	if err != nil {
		t.Fatal(err)
	}
	ui := map[string]*ast.File{}
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ui["ui/"+filepath.Base(p)] = f
	}
	var breaches []string
	registered, found := registry(fset, ui, slices.Sorted(maps.Keys(ui)), &breaches)
	if !found || len(breaches) > 0 || !registered["events"] || len(registered) != 8 {
		t.Errorf("registry found %v: packages %v, breaches %q; want the eight panes and none", found, registered, breaches)
	}
}

// Each pane rule finds its breach in a module made to have them all: an
// entry that names no pane package, a pane package not registered, panes
// importing each other or the root, uictx and kit importing a pane or the
// root, a process started from a pane; a pane still in the root, a
// registered package and the server starting processes are not breaches.
func TestPaneRules(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const m = "github.com/fleetwatch/fleetwatch/"
	write("main.go", "package main\n")
	write("ui/pane.go", `package ui

import ev "`+m+`ui/panes/events"

var paneSpecs = []paneSpec{
	{"Events", "", ev.New, nil},
	{"Odd", "", nil, nil},
}
`)
	write("ui/panes/events/events.go", "package events\n\nimport _ \""+m+"ui/panes/stray\"\n\nfunc New() {}\n")
	write("ui/panes/events/events_test.go", "package events\n\nimport _ \""+m+"ui\"\n") // tests are exempt
	write("ui/panes/stray/stray.go", "package stray\n\nimport (\n\t_ \""+m+"ui\"\n\t_ \"os/exec\"\n)\n")
	write("ui/uictx/ctx.go", "package uictx\n\nimport _ \""+m+"ui/panes/events\"\n")
	write("ui/kit/kit.go", "package kit\n\nimport _ \""+m+"ui\"\n")
	write("ui/serve/serve.go", "package serve\n\nimport _ \"os/exec\"\n")
	got, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`ui/pane.go:7: paneSpecs entry 2 ("Odd"): want a pane package's New`,
		"ui/panes/stray/: the pane package stray is not in ui's registry",
		"ui/panes/events/events.go: imports the pane package stray: panes never reach each other",
		"ui/panes/stray/stray.go: imports the root ui package",
		"ui/panes/stray/stray.go: imports os/exec: the UI reaches files and processes through the engine",
		"ui/uictx/ctx.go: imports the pane package events: ui/uictx knows no pane",
		"ui/kit/kit.go: imports the root ui package",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	if len(got) != 7 {
		t.Errorf("%d breaches, want 7:\n%s", len(got), all)
	}
}

// The root package is held to its files and its Model's methods: one
// more of either than the bound is a breach, the bound itself is not.
func TestRootSize(t *testing.T) {
	for _, over := range []bool{false, true} {
		dir := t.TempDir()
		write := func(rel, text string) {
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, rel), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("main.go", "package main\n")
		write("ui/pane.go", "package ui\n\nvar paneSpecs = []int{}\n")
		files, methods := maxRootFiles, maxModelMethods
		if over {
			files, methods = files+1, methods+1
		}
		var ms strings.Builder
		for i := range methods {
			fmt.Fprintf(&ms, "func (m *Model) m%d() {}\n", i)
		}
		write("ui/model.go", "package ui\n\ntype Model struct{}\n\n"+ms.String())
		for i := range files - 2 {
			write(fmt.Sprintf("ui/f%d.go", i), "package ui\n")
		}
		got, err := Check(dir)
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(got, "\n")
		if want := fmt.Sprintf("%d files in the root package", files); over != strings.Contains(all, want) {
			t.Errorf("over %v: %q in:\n%s", over, want, all)
		}
		if want := fmt.Sprintf("%d methods on the root Model", methods); over != strings.Contains(all, want) {
			t.Errorf("over %v: %q in:\n%s", over, want, all)
		}
		if n := len(got); over && n != 2 || !over && n != 0 {
			t.Errorf("over %v: %d breaches:\n%s", over, n, all)
		}
	}
}
