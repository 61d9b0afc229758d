package ui

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// A refresh of the UI writes nothing to the project, not even the lease
// lock, and shows what the next claim will repair.
func TestRefreshNeverWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	plans := filepath.Join(dir, planfs.Dir)
	os.WriteFile(filepath.Join(plans, "features", "a.md"), []byte("# a\n"), 0o644)
	os.RemoveAll(filepath.Join(plans, ".leases"))
	// A lease whose plan is gone: the next claim removes it.
	os.Mkdir(filepath.Join(plans, ".leases"), 0o755)
	os.WriteFile(filepath.Join(plans, ".leases", model.LeaseFileName("in-progress/gone.md")), []byte(`{"plan":"in-progress/gone.md","agent_id":"x","claimed_at":1,"expires_at":9999999999}`), 0o644)
	state := func() string {
		var b strings.Builder
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			fi, _ := os.Lstat(p)
			fmt.Fprintf(&b, "%s %v %d %d\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
			return nil
		})
		return b.String()
	}
	tr, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := state()
	msg := loadCmd(tr)().(loadedMsg)
	if msg.err != nil {
		t.Fatal(msg.err)
	}
	if after := state(); after != before {
		t.Fatalf("a refresh wrote to the tree:\n%s\n---\n%s", before, after)
	}
	found := false
	for _, w := range msg.d.Board.Warnings {
		found = found || strings.Contains(w.Message, "the next claim removes it")
	}
	if !found {
		t.Errorf("the board should say what the next claim repairs: %+v", msg.d.Board.Warnings)
	}
}
