package shape

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The floors of workers: a module made with one import of each kind finds
// exactly the breaches (a parent, a sibling on the same floor, a floor
// above, a folder on no floor) and none of the imports that point down.
func TestWorkerFloorsFindEachBreach(t *testing.T) {
	dir := t.TempDir()
	imp := func(rel string, deps ...string) {
		pkg := filepath.Base(filepath.Dir(rel))
		if pkg == "." {
			pkg = "main"
		}
		src := "package " + pkg + "\n\n"
		for _, d := range deps {
			src += "import _ \"github.com/fleetwatch/fleetwatch/" + d + "\"\n"
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	imp("main.go")
	// Down: allowed.
	imp("workers/run.go", "workers/notify", "workers/tree") // the top imports every floor
	imp("workers/notify/n.go", "workers/landing", "workers/look")
	imp("workers/look/l.go", "workers/tree", "workers/ledger", "model")
	imp("workers/landing/l.go", "workers/landing/gocache") // its own child
	imp("workers/landing/gocache/g.go")
	imp("workers/landing/x_test.go", "workers") // tests are exempt
	// Up or sideways: breaches.
	imp("workers/landing/land.go", "workers")              // its parent
	imp("workers/landing/gocache/p.go", "workers/landing") // its parent
	imp("workers/tree/t.go", "workers/look")               // a floor above
	imp("workers/look/c.go", "workers/contain")            // a sibling on its floor
	imp("workers/proc/p.go", "workers/stray")              // a folder on no floor
	imp("workers/stray/s.go")
	got, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"workers/landing/gocache/p.go: imports workers/landing, its parent: a child never imports its parent",
		"workers/landing/land.go: imports workers, its parent: a child never imports its parent",
		"workers/look/c.go: imports workers/contain, on floor 3 of workers, not below its own (3): imports point down (internal/shape/floors.go)",
		"workers/proc/p.go: imports workers/stray, which is on no floor of workers (internal/shape/floors.go)",
		"workers/stray/s.go: workers/stray is on no floor of workers: add it to workerFloors (internal/shape/floors.go)",
		"workers/tree/t.go: imports workers/look, on floor 3 of workers, not below its own (1): imports point down (internal/shape/floors.go)",
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("breaches:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Every folder under workers/ with Go files stands on a floor, and no
// floor names a folder that is not there: the table is the layout.
func TestWorkerFloorsListTheFolders(t *testing.T) {
	dirs, err := os.ReadDir("../../workers")
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, d := range dirs {
		if d.IsDir() && d.Name() != "testdata" {
			have = append(have, d.Name())
		}
	}
	var listed []string
	for _, floor := range workerFloors {
		listed = append(listed, floor...)
	}
	slices.Sort(have)
	slices.Sort(listed)
	if !slices.Equal(have, listed) {
		t.Errorf("folders under workers/: %v; workerFloors lists %v", have, listed)
	}
}
