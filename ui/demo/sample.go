package demo

import (
	"embed"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/fleetwatch/fleetwatch/model"
)

// sample holds jotter's files as the demo writes them; the history that
// writes them (which commit, which lane, what time) is build's. Its folders:
//   - project/: the project's own checkout as the demo leaves it, each file
//     at the path it is written to, except plans/LANE/SLUG.md, the plans in
//     the lane they are added to (planfs puts them under .plans/, and the
//     history moves them on), and the files in storedAs;
//   - first-commit/: files as the first commit had them, before a later
//     commit replaced them;
//   - branches/SLUG/: the files committed on SLUG's feature branch.
//
// It sits in _sample, a folder the go tool ignores, so the app's Go files
// are not a package of this module. No name in it starts with a dot: a
// real .gitignore would apply to this repository's own files, and a real
// .plans/ tree would look like a live project to anyone working in this
// one; a plain name also shows in a listing.
//
//go:embed _sample
var sample embed.FS

// storedAs is the sample's name of each project file that cannot sit in
// this repository under its own name: a .gitignore would ignore files here,
// and a go.mod would make the folder another module, which go:embed cannot
// reach.
var storedAs = map[string]string{".gitignore": "gitignore", "go.mod": "go.mod.txt"}

// sampleText is the sample file at name, a path under _sample.
func sampleText(name string) (string, error) {
	data, err := fs.ReadFile(sample, path.Join("_sample", name))
	return string(data), err
}

// samplePlan is the sample plan slug, as it is added to lane.
func samplePlan(lane model.Lane, slug string) (string, error) {
	return sampleText(path.Join("project", "plans", string(lane), slug+".md"))
}

// branchFiles is the files committed on slug's feature branch, by name.
func branchFiles(slug string) (map[string]string, error) {
	dir := path.Join("branches", slug)
	entries, err := fs.ReadDir(sample, path.Join("_sample", dir))
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, e := range entries {
		if files[e.Name()], err = sampleText(path.Join(dir, e.Name())); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// copySample writes the sample's copy of abs, a file in project.
func copySample(project, abs string) error {
	rel, err := filepath.Rel(project, abs)
	if err != nil {
		return err
	}
	text, err := sampleText(path.Join("project", filepath.ToSlash(rel)))
	if err != nil {
		return err
	}
	return os.WriteFile(abs, []byte(text), 0o644)
}
