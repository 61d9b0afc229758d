package shape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// claimsDir holds the claims registry and the backends that register
// themselves in it (claims.Register(claims.Description{Name: …})).
const claimsDir = "planfs/claims"

// facesNameNoBackend lists each place a face (main.go, and every package
// under ui/ but test support) names a registered claims backend as a
// choice: compared with ==/!=, a switch case, a map literal's key, or a
// Backend: field. Those are what the backend's description answers, so a
// new backend would mean editing faces. Other uses of the same words
// (running git, a field label "git") are not choices and pass.
func facesNameNoBackend(root string) []string {
	names := registeredBackends(root)
	if len(names) == 0 {
		return nil
	}
	fset := token.NewFileSet()
	var out []string
	for _, rel := range faceFiles(root) {
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(rel)), nil, 0)
		if err != nil || strings.HasSuffix(f.Name.Name, "test") {
			continue // Check reports what does not parse
		}
		for _, lit := range backendChoices(f, names) {
			out = append(out, fmt.Sprintf("%s:%d: names the claims backend %s as a choice: ask its description in planfs/claims' registry (claims.Describe, Where, Doctor, KeptIn), so a new backend changes no face", rel, fset.Position(lit.Pos()).Line, lit.Value))
		}
	}
	return out
}

// faceFiles are main.go and ui's Go files, tests and testdata left out,
// by their path from root.
func faceFiles(root string) []string {
	var rels []string
	if _, err := os.Stat(filepath.Join(root, "main.go")); err == nil {
		rels = append(rels, "main.go")
	}
	_ = filepath.WalkDir(filepath.Join(root, "ui"), func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go"):
			rel, _ := filepath.Rel(root, p)
			rels = append(rels, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(rels)
	return rels
}

// registeredBackends reads the names the backends under claimsDir
// register: Description{Name: "…"} or Name: a string constant of the
// same package.
func registeredBackends(root string) map[string]bool {
	fset := token.NewFileSet()
	files := map[string][]*ast.File{} // by directory
	_ = filepath.WalkDir(filepath.Join(root, filepath.FromSlash(claimsDir)), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			if f, err := parser.ParseFile(fset, p, nil, 0); err == nil {
				dir := path.Dir(filepath.ToSlash(p))
				files[dir] = append(files[dir], f)
			}
		}
		return nil
	})
	names := map[string]bool{}
	for _, pkg := range files {
		consts := stringConsts(pkg)
		for _, f := range pkg {
			ast.Inspect(f, func(n ast.Node) bool {
				if name, ok := describedName(n, consts); ok {
					names[name] = true
				}
				return true
			})
		}
	}
	return names
}

// describedName is the Name of a Description composite literal n.
func describedName(n ast.Node, consts map[string]string) (string, bool) {
	cl, ok := n.(*ast.CompositeLit)
	if !ok || litTypeName(cl.Type) != "Description" {
		return "", false
	}
	for _, e := range cl.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if k, isID := kv.Key.(*ast.Ident); !isID || k.Name != "Name" {
			continue
		}
		switch v := kv.Value.(type) {
		case *ast.BasicLit:
			s, err := strconv.Unquote(v.Value)
			return s, err == nil && v.Kind == token.STRING
		case *ast.Ident:
			s, ok := consts[v.Name]
			return s, ok
		}
	}
	return "", false
}

// litTypeName is T of a composite literal of T or pkg.T.
func litTypeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return ""
}

// stringConsts are a package's constants set to a string literal.
func stringConsts(pkg []*ast.File) map[string]string {
	out := map[string]string{}
	for _, f := range pkg {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							out[id.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
		}
	}
	return out
}

// backendChoices are f's string literals of a name in names used as a
// choice: either side of == or !=, a switch case, a map literal's key,
// the value of a Backend: field.
func backendChoices(f *ast.File, names map[string]bool) []*ast.BasicLit {
	var out []*ast.BasicLit
	ast.Inspect(f, func(n ast.Node) bool {
		for _, e := range choiceOperands(n) {
			if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && names[s] {
					out = append(out, lit)
				}
			}
		}
		return true
	})
	return out
}

// choiceOperands are the expressions n chooses by: either side of == or
// !=, a switch case's values, a map literal's keys, a Backend: field's
// value.
func choiceOperands(n ast.Node) []ast.Expr {
	switch n := n.(type) {
	case *ast.BinaryExpr:
		if n.Op == token.EQL || n.Op == token.NEQ {
			return []ast.Expr{n.X, n.Y}
		}
	case *ast.CaseClause:
		return n.List
	case *ast.CompositeLit:
		return mapKeys(n)
	case *ast.KeyValueExpr:
		if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Backend" {
			return []ast.Expr{n.Value}
		}
	}
	return nil
}

// mapKeys are the keys of n when it is a map literal.
func mapKeys(n *ast.CompositeLit) []ast.Expr {
	if _, isMap := n.Type.(*ast.MapType); !isMap {
		return nil
	}
	var keys []ast.Expr
	for _, e := range n.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			keys = append(keys, kv.Key)
		}
	}
	return keys
}
