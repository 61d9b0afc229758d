package ui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The shape targets of the house issue, checked on the source so a change
// that breaks one fails here rather than in a review: no function over 80
// lines outside tests and literal tables, ui.Model under 25 fields, no
// process started from the UI (it acts through the engine).
const (
	maxFuncLines   = 80
	maxModelFields = 24
)

func TestShapeTargets(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	longest, longestName := 0, ""
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); p == "fleetwatch/registry" || p == "os/exec" {
				t.Errorf("%s imports %s: the UI reaches files and processes through the engine", name, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == "exec" && n.Sel.Name == "Command" {
					t.Errorf("%s: exec.Command in ui", fset.Position(n.Pos()))
				}
			case *ast.FuncDecl:
				if n.Body == nil || literalTable(n.Body) {
					return true
				}
				lines := fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1
				if lines > longest {
					longest, longestName = lines, name+": "+n.Name.Name
				}
				if lines > maxFuncLines {
					t.Errorf("%s: %s is %d lines; keep functions to %d", fset.Position(n.Pos()), n.Name.Name, lines, maxFuncLines)
				}
			case *ast.TypeSpec:
				if st, ok := n.Type.(*ast.StructType); ok && n.Name.Name == "Model" {
					fields := 0
					for _, f := range st.Fields.List {
						fields += max(1, len(f.Names))
					}
					if fields > maxModelFields {
						t.Errorf("ui.Model has %d fields; keep it under %d", fields, maxModelFields+1)
					}
					t.Logf("ui.Model: %d fields", fields)
				}
			}
			return true
		})
	}
	t.Logf("longest function: %s, %d lines", longestName, longest)
}

// literalTable reports whether a body is one `return T{…}`: a table of
// values, whose length is its content.
func literalTable(body *ast.BlockStmt) bool {
	if len(body.List) != 1 {
		return false
	}
	r, ok := body.List[0].(*ast.ReturnStmt)
	if !ok || len(r.Results) != 1 {
		return false
	}
	_, ok = r.Results[0].(*ast.CompositeLit)
	return ok
}
