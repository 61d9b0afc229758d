package shape

import (
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// pane is one entry of ui's paneSpecs: its name, the type of its
// sub-model and the file that must hold it.
type pane struct{ name, typ, file string }

// paneFiles reads the panes from paneSpecs in ui's files (by their path
// from the root) and lists every breach of one file per pane: a pane whose
// file is missing or does not declare its type, a method of a pane's type
// in another file, and a method of a pane's type that takes the root
// *Model (a pane sees its context and asks the root by returning a
// message). A module without paneSpecs has no panes.
func paneFiles(fset *token.FileSet, ui map[string]*ast.File) ([]pane, []string) {
	rels := make([]string, 0, len(ui))
	for rel := range ui {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	specs, specsAt, fields := paneSpecsOf(ui, rels)
	if specs == nil {
		return nil, nil
	}
	var panes []pane
	var out []string
	for i, e := range specs.Elts {
		name, field, ok := paneEntry(e)
		typ := fields[field]
		if !ok || typ == "" {
			out = append(out, fmt.Sprintf("%s:%d: paneSpecs entry %d: want {\"Name\", …, func(m *Model) paneModel { return &m.field }} with field one of Model's", specsAt, fset.Position(e.Pos()).Line, i+1))
			continue
		}
		panes = append(panes, pane{name, typ, "ui/" + strings.ToLower(name) + ".go"})
	}
	for _, p := range panes {
		f, ok := ui[p.file]
		if !ok || !declares(f, p.typ) {
			out = append(out, fmt.Sprintf("%s: the %s pane's type %s is not declared in it: one pane, one file", p.file, p.name, p.typ))
		}
	}
	for _, rel := range rels {
		for _, d := range ui[rel].Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			for _, p := range panes {
				if recvType(fd) != p.typ {
					continue
				}
				if rel != p.file {
					out = append(out, fmt.Sprintf("%s:%d: %s is the %s pane's: it goes in %s", rel, fset.Position(fd.Pos()).Line, funcName(fd), p.name, p.file))
				}
				if takesModel(fd) {
					out = append(out, fmt.Sprintf("%s:%d: %s takes *Model: a pane sees its context (paneCtx) and returns what it asks of the root", rel, fset.Position(fd.Pos()).Line, funcName(fd)))
				}
			}
		}
	}
	return panes, out
}

// paneSpecsOf finds paneSpecs's literal, the file holding it, and the
// types of Model's fields, its embedded structs' fields included.
func paneSpecsOf(ui map[string]*ast.File, rels []string) (specs *ast.CompositeLit, at string, fields map[string]string) {
	structs := map[string]*ast.StructType{}
	for _, rel := range rels {
		for _, d := range ui[rel].Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if st, ok := s.Type.(*ast.StructType); ok {
						structs[s.Name.Name] = st
					}
				case *ast.ValueSpec:
					for i, n := range s.Names {
						if n.Name == "paneSpecs" && i < len(s.Values) {
							specs, _ = s.Values[i].(*ast.CompositeLit)
							at = rel
						}
					}
				}
			}
		}
	}
	fields = map[string]string{}
	var add func(st *ast.StructType, depth int)
	add = func(st *ast.StructType, depth int) {
		for _, f := range st.Fields.List {
			t := typeName(f.Type)
			if len(f.Names) == 0 && depth == 0 && structs[t] != nil {
				add(structs[t], depth+1)
			}
			for _, n := range f.Names {
				fields[n.Name] = t
			}
		}
	}
	if st := structs["Model"]; st != nil {
		add(st, 0)
	}
	return specs, at, fields
}

// paneEntry reads {"Name", …, func(m *Model) paneModel { return &m.field }}.
func paneEntry(e ast.Expr) (name, field string, ok bool) {
	lit, ok := e.(*ast.CompositeLit)
	if !ok || len(lit.Elts) == 0 {
		return "", "", false
	}
	first, ok := lit.Elts[0].(*ast.BasicLit)
	if !ok || first.Kind != token.STRING {
		return "", "", false
	}
	name, _ = strconv.Unquote(first.Value)
	fn, ok := lit.Elts[len(lit.Elts)-1].(*ast.FuncLit)
	if !ok || len(fn.Body.List) != 1 {
		return "", "", false
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return "", "", false
	}
	addr, ok := ret.Results[0].(*ast.UnaryExpr)
	if !ok || addr.Op != token.AND {
		return "", "", false
	}
	sel, ok := addr.X.(*ast.SelectorExpr)
	if !ok {
		return "", "", false
	}
	return name, sel.Sel.Name, name != ""
}

// takesModel reports whether one of fd's parameters is *Model.
func takesModel(fd *ast.FuncDecl) bool {
	for _, f := range fd.Type.Params.List {
		if star, ok := f.Type.(*ast.StarExpr); ok {
			if id, ok := star.X.(*ast.Ident); ok && id.Name == "Model" {
				return true
			}
		}
	}
	return false
}

func declares(f *ast.File, typ string) bool {
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok {
			for _, s := range g.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == typ {
					return true
				}
			}
		}
	}
	return false
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
