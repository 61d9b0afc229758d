// Package shape checks the code's shape targets, which its test runs over
// the whole module on every `go test ./...`: no function over 80 lines
// outside tests and literal tables, no command body over 40 lines (the
// closure a leaf's setup returns as its `body`, or a cobra RunE or Run: it
// parses, calls one function and prints), ui.Model under 25 fields, no
// process started and no file read from ui and the packages under it but
// the commands, the server and the demo (it asks the engine), git
// started only through gitenv.Run (which turns off what a repository's
// config could run and bounds git with its whole process group), only
// main.go and the card's folders at the module's root, imports that point
// down the house (floors), the cockpit imported only by the command that
// starts it, and the cockpit's shape (panes.go): each pane a package under
// ui/panes/ in ui's registry, reaching no other pane, over ui/uictx and
// ui/kit, which know no pane, and a root package held to its size; the
// floors of workers (floors.go), no face naming a claims backend
// (backends.go) and cyclomatic complexity (cyclo.go). docs/structure.md
// draws the house and lists the rules.
package shape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

const (
	maxFuncLines   = 80
	maxBodyLines   = 40
	maxModelFields = 24
)

// Check walks the Go files under root and lists every breach, one line each.
func Check(root string) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	ui := map[string]*ast.File{} // ui's files by their path from root
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			return checkDir(&out, rel, d.Name(), p == root)
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		out = append(out, rootFile(rel)...)
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		out = append(out, checkFile(fset, rel, f)...)
		if strings.HasPrefix(rel, "ui/") {
			ui[rel] = f
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	out = append(out, facesNameNoBackend(root)...)
	out = append(out, cyclo(root)...)
	return append(out, paneRules(fset, ui)...), nil
}

// checkDir skips what is not the module's code and notes a top folder
// that is no floor of the house.
func checkDir(out *[]string, rel, name string, isRoot bool) error {
	if isRoot {
		return nil
	}
	// The test kit is test code, like _test.go files and testdata.
	if strings.HasPrefix(name, ".") || name == "testdata" || name == "var" || rel == "internal/testkit" {
		return filepath.SkipDir
	}
	if _, ok := floors[rel]; !ok && !strings.Contains(rel, "/") {
		*out = append(*out, rel+"/: the root holds main.go, the card's folders and internal/ (see the README's layout)")
	}
	return nil
}

// rootFile notes a Go file at the module's root but main.go.
func rootFile(rel string) []string {
	if !strings.Contains(rel, "/") && rel != "main.go" {
		return []string{rel + ": the root holds main.go only; commands live in ui/cli"}
	}
	return nil
}

func checkFile(fset *token.FileSet, rel string, f *ast.File) []string {
	var out []string
	inUI := uiFace(rel)
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			out = append(out, funcLength(fset, rel, d)...)
		case *ast.GenDecl:
			out = append(out, modelFields(fset, rel, d)...)
		}
	}
	// Test packages (landtest, remotetest…) drive git as a person would.
	if !strings.HasPrefix(rel, "internal/gitenv/") && !strings.HasSuffix(f.Name.Name, "test") {
		out = append(out, gitOutsideGitenv(fset, rel, f)...)
	}
	out = append(out, upwardImports(rel, f)...)
	out = append(out, workerFloorBreaches(rel, f)...)
	out = append(out, cockpitImport(rel, f)...)
	if inUI {
		out = append(out, uiReaches(fset, rel, f)...)
	}
	return out
}

// funcLength notes a function over maxFuncLines, and a command body in it
// over maxBodyLines; a literal table holds data and may be long.
func funcLength(fset *token.FileSet, rel string, d *ast.FuncDecl) []string {
	if d.Body == nil || literalTable(d) {
		return nil
	}
	var out []string
	if n := lines(fset, d); n > maxFuncLines {
		out = append(out, fmt.Sprintf("%s:%d: %s is %d lines (at most %d)", rel, fset.Position(d.Pos()).Line, funcName(d), n, maxFuncLines))
	}
	for _, b := range commandBodies(d) {
		if n := lines(fset, b); n > maxBodyLines {
			out = append(out, fmt.Sprintf("%s:%d: a command body in %s is %d lines (at most %d): parse flags, call one function, print its result", rel, fset.Position(b.Pos()).Line, funcName(d), n, maxBodyLines))
		}
	}
	return out
}

// modelFields notes ui.Model grown past maxModelFields.
func modelFields(fset *token.FileSet, rel string, d *ast.GenDecl) []string {
	var out []string
	for _, s := range d.Specs {
		ts, ok := s.(*ast.TypeSpec)
		if !ok || path.Dir(rel) != "ui" || ts.Name.Name != "Model" {
			continue
		}
		st, ok := ts.Type.(*ast.StructType)
		if ok && fieldCount(st) > maxModelFields {
			out = append(out, fmt.Sprintf("%s:%d: ui.Model has %d fields (keep it under %d)", rel, fset.Position(ts.Pos()).Line, fieldCount(st), maxModelFields+1))
		}
	}
	return out
}

// uiReaches notes where the cockpit reaches files or processes itself
// (the registry, os/exec, exec.Command) instead of asking the engine.
func uiReaches(fset *token.FileSet, rel string, f *ast.File) []string {
	var out []string
	for _, imp := range f.Imports {
		if p := strings.Trim(imp.Path.Value, `"`); p == module+"/registry" || p == "os/exec" {
			out = append(out, fmt.Sprintf("%s: imports %s: the UI reaches files and processes through the engine", rel, p))
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Command" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "exec" {
				out = append(out, fmt.Sprintf("%s:%d: exec.Command in ui: ask the engine", rel, fset.Position(sel.Pos()).Line))
			}
		}
		return true
	})
	return out
}

// uiFace reports whether rel is the cockpit's (ui/ and every package
// under it) but the commands, the server and the demo, which start
// processes: the cockpit asks the engine.
func uiFace(rel string) bool {
	if !strings.HasPrefix(rel, "ui/") {
		return false
	}
	for _, own := range []string{"ui/cli/", "ui/serve/", "ui/demo/"} {
		if strings.HasPrefix(rel, own) {
			return false
		}
	}
	return true
}

// floors are the house's storeys by the module's top folders: a package
// imports only from its own floor or below, so internal/ (the ground) uses
// no card folder, the engine no face, and the faces (ui and the commands
// under it) sit on top. screenshots and docs hold no code but text.
var floors = map[string]int{
	"internal": 0, "docs": 0, "screenshots": 0,
	"model": 1, "registry": 1,
	"planfs":  2,
	"workers": 3,
	"ui":      4,
}

const module = "github.com/fleetwatch/fleetwatch"

// floorOf is the floor of the package at rel (a path from the module's
// root); the root's own package (main) is above every floor.
func floorOf(rel string) int {
	top, _, _ := strings.Cut(rel, "/")
	if f, ok := floors[top]; ok && strings.Contains(rel, "/") {
		return f
	}
	return len(floors)
}

// upwardImports lists each import of the module's packages that sits on a
// higher floor than rel's. Test support (packages named *test, and the test
// kit) drives the whole house and is exempt, and so is a program (package
// main, which nothing imports): the release describes the commands.
func upwardImports(rel string, f *ast.File) []string {
	if strings.HasSuffix(f.Name.Name, "test") || f.Name.Name == "main" {
		return nil
	}
	var out []string
	mine := floorOf(rel)
	for _, imp := range f.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		dep, ok := strings.CutPrefix(p, module+"/")
		if !ok {
			continue
		}
		if floorOf(dep+"/x.go") > mine {
			out = append(out, fmt.Sprintf("%s: imports %s, which sits above it: imports point down (internal < model, registry < planfs < workers < ui)", rel, p))
		}
	}
	return out
}

// cockpitFile is the one file of the commands that starts the cockpit;
// every other command reaches the engine without it.
const cockpitFile = "ui/cli/uicmd.go"

// cockpitImport reports a command file other than cockpitFile that
// imports the cockpit package.
func cockpitImport(rel string, f *ast.File) []string {
	if path.Dir(rel) != "ui/cli" || rel == cockpitFile {
		return nil
	}
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) == module+"/ui" {
			return []string{rel + ": imports the cockpit (" + module + "/ui): only " + cockpitFile + ", which starts it, may"}
		}
	}
	return nil
}

// gitOutsideGitenv lists each exec.Command or exec.CommandContext that
// starts "git" itself, and each gitenv.Command outside commandKept: the
// product's git runs through gitenv.Run (its own process group, a
// deadline, no prompts).
func gitOutsideGitenv(fset *token.FileSet, rel string, f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		line := fset.Position(call.Pos()).Line
		if id.Name == "gitenv" && sel.Sel.Name == "Command" && !commandKept(rel) {
			out = append(out, fmt.Sprintf("%s:%d: gitenv.Command: run git through gitenv.Run", rel, line))
		}
		if id.Name == "exec" && startsGit(sel.Sel.Name, call.Args) {
			out = append(out, fmt.Sprintf("%s:%d: git started by exec: run git through gitenv.Run", rel, line))
		}
		return true
	})
	return out
}

// startsGit reports whether exec's fn (Command or CommandContext) called
// with args starts "git".
func startsGit(fn string, args []ast.Expr) bool {
	prog := 0
	switch fn {
	case "Command":
	case "CommandContext":
		prog = 1
	default:
		return false
	}
	if len(args) <= prog {
		return false
	}
	lit, ok := args[prog].(*ast.BasicLit)
	return ok && lit.Value == `"git"`
}

// commandKept are the files that may still build their own git command:
// the demo plays an agent, whose git runs in the environment its driver
// gave it; the remote worker loop is moving into workers/workloop* and
// switches to gitenv.Run after (issue 27).
func commandKept(rel string) bool {
	dir, file := path.Split(rel)
	return dir == "ui/demo/" ||
		dir == "ui/cli/" && (strings.HasPrefix(file, "remote") || file == "workonce.go") ||
		dir == "workers/" && strings.HasPrefix(file, "workloop")
}

// lines is how many lines n spans, its first and last included.
func lines(fset *token.FileSet, n ast.Node) int {
	return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1
}

// commandBodies lists the closures in fd that a command runs: each
// function literal returned by a function whose one result is `body` (a
// leaf's setup, in ui/cli), and each one given to a RunE or Run.
func commandBodies(fd *ast.FuncDecl) []*ast.FuncLit {
	var out []*ast.FuncLit
	if returnsBody(fd.Type) {
		out = append(out, returnedLits(fd.Body)...)
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		out = append(out, bodiesAt(n)...)
		return true
	})
	return out
}

// bodiesAt are the command bodies n itself gives: those a literal
// returning body returns, or a literal given to a RunE or Run field.
func bodiesAt(n ast.Node) []*ast.FuncLit {
	switch n := n.(type) {
	case *ast.FuncLit:
		if returnsBody(n.Type) {
			return returnedLits(n.Body)
		}
	case *ast.KeyValueExpr:
		if fl, ok := n.Value.(*ast.FuncLit); ok && runField(n.Key) {
			return []*ast.FuncLit{fl}
		}
	case *ast.AssignStmt:
		return assignedRuns(n)
	}
	return nil
}

// assignedRuns are the literals an assignment gives to a RunE or Run.
func assignedRuns(n *ast.AssignStmt) []*ast.FuncLit {
	var out []*ast.FuncLit
	for i, l := range n.Lhs {
		if sel, ok := l.(*ast.SelectorExpr); ok && runField(sel.Sel) && i < len(n.Rhs) {
			if fl, ok := n.Rhs[i].(*ast.FuncLit); ok {
				out = append(out, fl)
			}
		}
	}
	return out
}

// returnsBody reports whether ft's one result is of the type named body.
func returnsBody(ft *ast.FuncType) bool {
	if ft.Results == nil || len(ft.Results.List) != 1 || len(ft.Results.List[0].Names) > 1 {
		return false
	}
	id, ok := ft.Results.List[0].Type.(*ast.Ident)
	return ok && id.Name == "body"
}

// returnedLits lists the function literals fn returns itself, not those
// its own closures return.
func returnedLits(fn *ast.BlockStmt) []*ast.FuncLit {
	var out []*ast.FuncLit
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(n.Results) == 1 {
				if fl, ok := n.Results[0].(*ast.FuncLit); ok {
					out = append(out, fl)
				}
			}
		}
		return true
	})
	return out
}

// runField reports whether e names a cobra command's RunE or Run.
func runField(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && (id.Name == "RunE" || id.Name == "Run")
}

// literalTable reports whether fd's body is one `return T{…}`.
func literalTable(fd *ast.FuncDecl) bool {
	if len(fd.Body.List) != 1 {
		return false
	}
	ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	_, ok = ret.Results[0].(*ast.CompositeLit)
	return ok
}

func fieldCount(st *ast.StructType) int {
	n := 0
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			n++ // embedded
		}
		n += len(f.Names)
	}
	return n
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv != nil && len(fd.Recv.List) > 0 {
		t := fd.Recv.List[0].Type
		if star, ok := t.(*ast.StarExpr); ok {
			t = star.X
		}
		if id, ok := t.(*ast.Ident); ok {
			return id.Name + "." + fd.Name.Name
		}
	}
	return fd.Name.Name
}
