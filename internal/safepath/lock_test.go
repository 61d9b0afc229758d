package safepath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLockExcludesAndRefusesSymlinks(t *testing.T) {
	root := t.TempDir()
	unlock, err := Lock(root, "a/b/x.lock", 0)
	if err != nil {
		t.Fatal(err)
	}
	// A second holder (another open file description) waits, then gives up
	// naming the file.
	if _, err := Lock(root, "a/b/x.lock", 30*time.Millisecond); err == nil || !strings.Contains(err.Error(), "a/b/x.lock") {
		t.Fatalf("second lock while held: %v", err)
	}
	unlock()
	unlock2, err := Lock(root, "a/b/x.lock", 30*time.Millisecond)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()
	os.Symlink(t.TempDir(), filepath.Join(root, "out"))
	if _, err := Lock(root, "out/x.lock", 0); !errors.Is(err, ErrSymlink) {
		t.Fatalf("lock through a symlink: %v", err)
	}
}
