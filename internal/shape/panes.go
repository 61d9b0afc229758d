package shape

import (
	"fmt"
	"go/ast"
	"go/token"
	"path"
	"sort"
	"strconv"
	"strings"
)

// The cockpit's shape (issue 42): each pane a package under ui/panes/,
// registered in the root's paneSpecs, over a shared context (ui/uictx) and
// a kit (ui/kit) that know no pane; a root package that only routes.
const (
	panesDir = "ui/panes/"
	// maxRootFiles and maxModelMethods bound the root package: its own
	// non-test files and the methods on its Model. They only go down as
	// panes leave the root (the goal is 25 and 60).
	maxRootFiles    = 29
	maxModelMethods = 161
)

// paneRules lists the breaches of the cockpit's shape in ui's files (by
// their path from the module's root, tests left out): a registry entry
// that names no pane package's New, a
// pane package the registry does not list, a pane package importing
// another or the root, uictx or kit importing a pane or the root, and a
// root package over its files or its Model's methods. A module without
// paneSpecs has no panes.
func paneRules(fset *token.FileSet, ui map[string]*ast.File) []string {
	rels := make([]string, 0, len(ui))
	for rel := range ui {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	var out []string
	registered, found := registry(fset, ui, rels, &out)
	rootFiles, methods := 0, 0
	for _, rel := range rels {
		dir := path.Dir(rel)
		if dir == "ui" {
			rootFiles++
			methods += modelMethods(ui[rel])
		}
		out = append(out, paneImports(rel, ui[rel])...)
		if name, ok := paneOf(rel); ok && found && !registered[name] {
			registered[name] = true // once per package
			out = append(out, fmt.Sprintf("%s/: the pane package %s is not in ui's registry (paneSpecs): add its line", panesDir+name, name))
		}
	}
	if found && rootFiles > maxRootFiles {
		out = append(out, fmt.Sprintf("ui/: %d files in the root package (at most %d): a pane's code goes in its package", rootFiles, maxRootFiles))
	}
	if found && methods > maxModelMethods {
		out = append(out, fmt.Sprintf("ui/: %d methods on the root Model (at most %d): a pane's loading, keys and rows are the pane's", methods, maxModelMethods))
	}
	return out
}

// registry reads paneSpecs in the root ui package: the pane packages its
// entries name (by their folder under ui/panes/), whether it was found,
// and each entry that names none.
func registry(fset *token.FileSet, ui map[string]*ast.File, rels []string, out *[]string) (map[string]bool, bool) {
	registered := map[string]bool{}
	found := false
	for _, rel := range rels {
		if path.Dir(rel) != "ui" {
			continue
		}
		f := ui[rel]
		specs := specsLit(f)
		if specs == nil {
			continue
		}
		found = true
		imports := paneImportNames(f)
		for i, e := range specs.Elts {
			name, pkg := entry(e, imports)
			if pkg != "" {
				registered[pkg] = true
			} else {
				*out = append(*out, fmt.Sprintf("%s:%d: paneSpecs entry %d (%q): want a pane package's New (%s<name>)", rel, fset.Position(e.Pos()).Line, i+1, name, panesDir))
			}
		}
	}
	return registered, found
}

// specsLit is the literal paneSpecs is set to in f, nil when f has none.
func specsLit(f *ast.File) *ast.CompositeLit {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range g.Specs {
			if vs, ok := s.(*ast.ValueSpec); ok {
				for i, n := range vs.Names {
					if n.Name == "paneSpecs" && i < len(vs.Values) {
						lit, _ := vs.Values[i].(*ast.CompositeLit)
						return lit
					}
				}
			}
		}
	}
	return nil
}

// paneImportNames maps the names f imports pane packages by to their
// folders under ui/panes/.
func paneImportNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		dir, ok := strings.CutPrefix(p, module+"/"+panesDir)
		if !ok {
			continue
		}
		name := path.Base(dir)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = dir
	}
	return out
}

// entry reads a registry entry: its name (the first element) and the pane
// package whose New one of its elements is, "" for none.
func entry(e ast.Expr, imports map[string]string) (name, pkg string) {
	lit, ok := e.(*ast.CompositeLit)
	if !ok || len(lit.Elts) == 0 {
		return "", ""
	}
	if first, ok := lit.Elts[0].(*ast.BasicLit); ok && first.Kind == token.STRING {
		name, _ = strconv.Unquote(first.Value)
	}
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			el = kv.Value
		}
		sel, ok := el.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "New" {
			continue
		}
		if id, ok := sel.X.(*ast.Ident); ok && imports[id.Name] != "" {
			return name, imports[id.Name]
		}
	}
	return name, ""
}

// paneOf is the pane package rel is in (its folder under ui/panes/).
func paneOf(rel string) (string, bool) {
	dir, ok := strings.CutPrefix(path.Dir(rel), panesDir)
	if !ok || dir == "" {
		return "", false
	}
	return dir, true
}

// paneImports lists rel's imports that break the pane rules: a pane
// package imports no other pane and not the root; uictx, kit, verbs and
// mergekeys import no pane and not the root.
func paneImports(rel string, f *ast.File) []string {
	mine, isPane := paneOf(rel)
	dir := path.Dir(rel)
	shared := dir == "ui/uictx" || dir == "ui/kit" || dir == "ui/verbs" || dir == "ui/mergekeys"
	if !isPane && !shared {
		return nil
	}
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		pane, toPane := strings.CutPrefix(p, module+"/"+panesDir)
		switch {
		case p == module+"/ui":
			out = append(out, fmt.Sprintf("%s: imports the root ui package: a pane asks the root by returning a request (uictx)", rel))
		case toPane && shared:
			out = append(out, fmt.Sprintf("%s: imports the pane package %s: %s knows no pane", rel, pane, dir))
		case toPane && pane != mine:
			out = append(out, fmt.Sprintf("%s: imports the pane package %s: panes never reach each other (read it from uictx.Ctx, or ask the root)", rel, pane))
		}
	}
	return out
}

// modelMethods counts f's methods on Model or *Model.
func modelMethods(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && recvType(fd) == "Model" {
			n++
		}
	}
	return n
}

// typeName is T for T and *T, "" for any other type.
func typeName(t ast.Expr) string {
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func recvType(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	return typeName(fd.Recv.List[0].Type)
}
