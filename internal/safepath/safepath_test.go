package safepath

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestMkdirAllCreatesAndRefusesSymlinks(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	if _, err := MkdirAll(root, "a/b/c"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(root, "a", "b", "c")); err != nil || !fi.IsDir() {
		t.Fatalf("a/b/c not made: %v", err)
	}
	if err := os.Symlink(out, filepath.Join(root, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "missing"), filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"a/link", "a/link/x", "dangling", "dangling/x"} {
		_, err := MkdirAll(root, rel)
		var se *Error
		if !errors.Is(err, ErrSymlink) || !errors.As(err, &se) {
			t.Errorf("%s: got %v, want a symlink refusal", rel, err)
			continue
		}
		if want := filepath.Dir(rel); se.Rel != rel && se.Rel != want {
			t.Errorf("%s: error names %q", rel, se.Rel)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := MkdirAll(root, "file/x"); !errors.Is(err, ErrNotDir) {
		t.Errorf("file/x: got %v, want not a directory", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("something was made outside: %v", entries)
	}
	if got := (&Error{Rel: ".plans/logs", Err: ErrSymlink}).Error(); got != ".plans/logs is a symlink; fleetwatch never writes through one" {
		t.Errorf("message %q", got)
	}
}

func TestOpenFileNeverFollows(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	victim := filepath.Join(out, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := MkdirAll(root, "logs"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(root, "logs", "events.jsonl")); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []int{os.O_WRONLY | os.O_APPEND | os.O_CREATE, os.O_RDWR | os.O_CREATE, os.O_WRONLY | os.O_CREATE | os.O_EXCL} {
		f, err := OpenFile(root, "logs/events.jsonl", flag, 0o644)
		if err == nil {
			f.Close()
			t.Errorf("flag %#x: opened through a symlink", flag)
		} else if flag&os.O_EXCL == 0 && !errors.Is(err, ErrSymlink) {
			t.Errorf("flag %#x: %v, want a symlink refusal", flag, err)
		}
	}
	if _, err := WriteNew(root, "logs/events.jsonl", []byte("x"), 0o644); !errors.Is(err, ErrSymlink) {
		t.Errorf("WriteNew over a symlink: %v", err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep" {
		t.Errorf("victim now %q", data)
	}
	// A FIFO fails at once instead of hanging the writer.
	if err := syscall.Mkfifo(filepath.Join(root, "logs", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(root, "logs/fifo", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); !errors.Is(err, ErrNotRegular) {
		t.Errorf("fifo: %v, want not a regular file", err)
	}
	if _, err := OpenFile(root, "logs/fifo", os.O_RDWR, 0o644); !errors.Is(err, ErrNotRegular) {
		t.Errorf("fifo rdwr: %v, want not a regular file", err)
	}
	f, err := OpenFile(root, "new/dir/file", os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, err := os.Stat(filepath.Join(root, "new", "dir", "file")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new file: %v %v", fi, err)
	}
}

func TestCheckOnlyLooks(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	if err := Check(root, "var/fleet/logs/a.log"); err != nil {
		t.Errorf("missing paths are fine: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "var")); err == nil {
		t.Errorf("Check made a folder")
	}
	if err := os.Symlink(out, filepath.Join(root, "var")); err != nil {
		t.Fatal(err)
	}
	err := Check(root, "var/fleet/logs/a.log")
	var se *Error
	if !errors.As(err, &se) || se.Rel != "var" || !errors.Is(err, ErrSymlink) {
		t.Errorf("got %v, want var named as a symlink", err)
	}
	for _, bad := range []string{"", "/abs", "a/../b", "./a"} {
		if err := Check(root, bad); !errors.Is(err, ErrBadPath) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
