package landing

import (
	"go/parser"
	"go/token"
	"path"
	"strconv"
	"strings"
)

// A tree whose change to a tree the trusted side already built adds no
// dependency needs no trusted build of its own: what the layers can
// serve a check is the standard library and module-cache packages (a
// package of the tree's own is keyed by its folder, a check's own), and
// a change that touches no go.mod, go.sum, go.work or vendor/ and
// imports nothing its folders' Go files did not import before needs none
// of those the parent's build did not compile. Skipping it saves a second
// compile of the tree beside its checks.

// addsDependencies reports whether commit's change from its first parent
// may need what the parent's trusted build did not compile; true when in
// doubt.
func addsDependencies(project, commit string) bool {
	out, err := git(project, "diff", "--no-renames", "--name-status", "-z", commit+"^1", commit)
	if err != nil {
		return true
	}
	f := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	if len(f)%2 != 0 {
		return true
	}
	for i := 0; i+1 < len(f); i += 2 {
		if fileAddsDependencies(project, commit, f[i], f[i+1]) {
			return true
		}
	}
	return false
}

// fileAddsDependencies reports whether the change (git's status letter)
// to the file p may need what the parent's build did not compile: a
// module or vendor file, a Go file's new import; true when in doubt.
func fileAddsDependencies(project, commit, status, p string) bool {
	switch base := path.Base(p); {
	case base == "go.mod" || base == "go.sum" || base == "go.work" || base == "go.work.sum" || strings.HasPrefix(p, "vendor/") || strings.Contains(p, "/vendor/"):
		return true
	case !strings.HasSuffix(p, ".go") || status == "D":
		return false
	case status == "A":
		return !importsWithinDir(project, commit, p)
	case status != "M":
		return true
	}
	return !importsWithin(project, commit+"^1:"+p, commit+":"+p)
}

// importsWithin reports whether every import of the Go file at newRef is
// one of the file at oldRef's.
func importsWithin(project, oldRef, newRef string) bool {
	old, ok1 := importsOf(project, oldRef)
	now, ok2 := importsOf(project, newRef)
	if !ok1 || !ok2 {
		return false
	}
	for imp := range now {
		if !old[imp] {
			return false
		}
	}
	return true
}

// importsWithinDir reports whether every import of the Go file p, added
// by commit, is one of the Go files' in its folder in commit's parent.
func importsWithinDir(project, commit, p string) bool {
	now, ok := importsOf(project, commit+":"+p)
	if !ok {
		return false
	}
	dir := path.Dir(p)
	names, err := git(project, "ls-tree", "-z", "--name-only", commit+"^1", "--", dir+"/")
	if err != nil {
		return false
	}
	had := map[string]bool{}
	for _, n := range strings.Split(names, "\x00") {
		if strings.HasSuffix(n, ".go") && path.Dir(n) == dir {
			imps, ok := importsOf(project, commit+"^1:"+n)
			if !ok {
				return false
			}
			for imp := range imps {
				had[imp] = true
			}
		}
	}
	for imp := range now {
		if !had[imp] {
			return false
		}
	}
	return true
}

// importsOf is the set of a Go file's imports, read from git.
func importsOf(project, ref string) (map[string]bool, bool) {
	src, err := git(project, "cat-file", "blob", ref)
	if err != nil {
		return nil, false
	}
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
	if err != nil {
		return nil, false
	}
	out := map[string]bool{}
	for _, s := range f.Imports {
		p, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			return nil, false
		}
		out[p] = true
	}
	return out, true
}
