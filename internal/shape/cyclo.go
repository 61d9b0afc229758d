package shape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

const (
	// maxCyclo is the most branches one function may hold (cyclomatic
	// complexity, as gocyclo counts it).
	maxCyclo = 25
	// maxCycloMean is a ratchet on the module's mean complexity: lower it
	// as the mean falls, never raise it. Issue 42 aims at 3.5.
	maxCycloMean = 4.31
)

// cycloWaived are the functions over maxCyclo that the rest of issue 42 is
// splitting now (the cockpit into panes, the workers by floor), by file and
// name. A waived function found no longer over maxCyclo is a breach too,
// so the list only shrinks.
var cycloWaived = map[string]bool{}

// cyclo lists each function over maxCyclo and the module's mean when it is
// over maxCycloMean, counted over the code gocyclo v0.6.0 would count with
// `-ignore '_test|internal/testkit'`: every .go file but tests, the test
// kit, and folders named testdata or vendor or starting with . or _ (the
// go tool's own rule, which keeps the demo's sample project out). A
// literal table (literalTable) may be long and branchy: it holds data.
func cyclo(root string) []string {
	var c cycloCount
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && p != root && cycloSkipsDir(rel, d.Name()) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		return c.file(p, rel)
	})
	if err != nil {
		return append(c.out, "cyclomatic complexity: "+err.Error())
	}
	return c.verdict()
}

// cycloCount adds up the module's complexity file by file.
type cycloCount struct {
	out          []string
	total, funcs int
	// waived are the waived functions found, true when over maxCyclo.
	waived map[string]bool
}

// file counts the functions of the file at path p (rel from the root) and
// notes each one over maxCyclo.
func (c *cycloCount) file(p, rel string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, nil, 0)
	if err != nil {
		return err
	}
	if c.waived == nil {
		c.waived = map[string]bool{}
	}
	for _, fn := range cycloFuncs(f) {
		c.total, c.funcs = c.total+fn.n, c.funcs+1
		key := rel + " " + fn.name
		switch over := fn.n > maxCyclo && !fn.table; {
		case cycloWaived[key]:
			c.waived[key] = over
		case over:
			c.out = append(c.out, fmt.Sprintf("%s:%d: %s has cyclomatic complexity %d (at most %d): split it by what it does", rel, fset.Position(fn.pos).Line, fn.name, fn.n, maxCyclo))
		}
	}
	return nil
}

// verdict adds to the breaches the waivers no longer needed and a mean
// over the ratchet.
func (c *cycloCount) verdict() []string {
	for _, key := range slices.Sorted(maps.Keys(c.waived)) {
		if !c.waived[key] {
			c.out = append(c.out, fmt.Sprintf("%s is no longer over %d: drop it from cycloWaived", key, maxCyclo))
		}
	}
	if mean := float64(c.total) / float64(max(c.funcs, 1)); mean > maxCycloMean {
		c.out = append(c.out, fmt.Sprintf("the module's mean cyclomatic complexity is %.2f over %d functions (at most %.2f): split what branches most", mean, c.funcs, maxCycloMean))
	}
	return c.out
}

// cycloSkipsDir reports whether the folder name at rel holds no code
// gocyclo counts.
func cycloSkipsDir(rel, name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
		name == "testdata" || name == "vendor" || rel == "internal/testkit"
}

// cycloFunc is one function gocyclo counts: its name, where it starts, its
// complexity, and whether it is a literal table.
type cycloFunc struct {
	name  string
	pos   token.Pos
	n     int
	table bool
}

// cycloFuncs lists f's functions as gocyclo does: each declared function
// and method, and each function literal a package-level var is set to.
// The literals inside a declared function count towards it.
func cycloFuncs(f *ast.File) []cycloFunc {
	var out []cycloFunc
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			out = append(out, cycloFunc{funcName(d), d.Pos(), complexity(d), d.Body != nil && literalTable(d)})
		case *ast.GenDecl:
			out = append(out, varFuncs(d)...)
		}
	}
	return out
}

// varFuncs lists the function literals d's var specs are set to, each named
// by its spec's first name.
func varFuncs(d *ast.GenDecl) []cycloFunc {
	var out []cycloFunc
	for _, s := range d.Specs {
		vs, ok := s.(*ast.ValueSpec)
		if !ok {
			continue
		}
		for _, v := range vs.Values {
			if fl, ok := v.(*ast.FuncLit); ok {
				out = append(out, cycloFunc{name: vs.Names[0].Name, pos: fl.Pos(), n: complexity(fl)})
			}
		}
	}
	return out
}

// complexity is fn's cyclomatic complexity as gocyclo v0.6.0 counts it:
// 1, plus one for each if, for, range, non-default case and select case,
// && and ||.
func complexity(fn ast.Node) int {
	n := 1
	ast.Inspect(fn, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			n += branch(x.List != nil)
		case *ast.CommClause:
			n += branch(x.Comm != nil)
		case *ast.BinaryExpr:
			n += branch(x.Op == token.LAND || x.Op == token.LOR)
		}
		return true
	})
	return n
}

// branch is 1 for a node that adds a path, else 0.
func branch(adds bool) int {
	if adds {
		return 1
	}
	return 0
}
