package shape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
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

// ui's seven panes are found where paneSpecs lists them, so the rule of
// one file per pane holds of them all, not of none.
func TestEveryPaneIsFound(t *testing.T) {
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
	panes, breaches := paneFiles(fset, ui)
	var got []string
	for _, p := range panes {
		got = append(got, p.file+" "+p.typ)
	}
	want := []string{"ui/plans.go planList", "ui/leases.go leaseList", "ui/worktrees.go treeList", "ui/workers.go workerList",
		"ui/events.go eventList", "ui/merge.go mergeList", "ui/inbox.go inboxList", "ui/fleet.go fleetList"}
	if !slices.Equal(got, want) || len(breaches) > 0 {
		t.Errorf("panes %q, breaches %q; want %q and none", got, breaches, want)
	}
}

// A pane without its file, a pane's type declared elsewhere, a pane's
// method in another file and an entry whose type cannot be told are each
// a breach; a pane in its own file is not.
func TestOnePaneOneFile(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", "package main\n")
	write("ui/pane.go", `package ui

type paneModel interface{}

var paneSpecs = [4]struct {
	name string
	of   func(m *Model) paneModel
}{
	{"Plans", func(m *Model) paneModel { return &m.plans }},
	{"Leases", func(m *Model) paneModel { return &m.leases }},
	{"Events", func(m *Model) paneModel { return &m.events }},
	{"Odd", func(m *Model) paneModel { return nil }},
}

func (p *planList) stray() {}
`)
	write("ui/ui.go", "package ui\n\ntype Model struct {\n\t*paneSet\n}\n\ntype paneSet struct {\n\tplans  planList\n\tleases leaseList\n\tevents eventList\n}\n\ntype eventList struct{}\n")
	write("ui/plans.go", "package ui\n\ntype planList struct{}\n\nfunc (p *planList) view() {}\n")
	write("ui/plans_test.go", "package ui\n\nfunc (p *planList) helper() {}\n") // tests are exempt
	write("ui/events.go", "package ui\n")
	got, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"ui/pane.go:12: paneSpecs entry 4",
		"ui/leases.go: the Leases pane's type leaseList is not declared in it",
		"ui/events.go: the Events pane's type eventList is not declared in it",
		"ui/pane.go:15: planList.stray is the Plans pane's: it goes in ui/plans.go",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	if len(got) != 4 {
		t.Errorf("%d breaches, want 4:\n%s", len(got), all)
	}
}

// A pane's method that takes the root *Model is a breach, in its own file
// or not; a function of the pane's file that takes it (a row renderer the
// table calls) and a method taking the pane's context are not.
func TestPaneTakesNoModel(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", "package main\n")
	write("ui/pane.go", `package ui

type paneModel interface{}

var paneSpecs = [1]struct {
	name string
	of   func(m *Model) paneModel
}{
	{"Plans", func(m *Model) paneModel { return &m.plans }},
}
`)
	write("ui/ui.go", "package ui\n\ntype Model struct {\n\tplans planList\n}\n\ntype paneCtx struct{}\n")
	write("ui/plans.go", `package ui

type planList struct{}

func (p *planList) rebuild(pc *paneCtx) {}

func (p *planList) view(m *Model, h int) []string { return nil }

func (p *planList) update(_ int, m *Model) {}

func planLine(m *Model, i int) string { return "" }
`)
	got, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"ui/plans.go:7: planList.view takes *Model",
		"ui/plans.go:9: planList.update takes *Model",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	if len(got) != 2 {
		t.Errorf("%d breaches, want 2:\n%s", len(got), all)
	}
}
