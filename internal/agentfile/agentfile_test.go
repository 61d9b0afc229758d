package agentfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadRefusesWhatIsNotABoundedRegularFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	os.WriteFile(ok, []byte("hello"), 0o644)
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, 11), 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(ok, link)

	if data, err := Read(ok, 10); err != nil || string(data) != "hello" {
		t.Fatalf("regular file: %q, %v", data, err)
	}
	if _, err := Read(filepath.Join(dir, "none"), 10); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "none") {
		t.Fatalf("missing: %v", err)
	}
	if _, err := Read(big, 10); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), big) {
		t.Fatalf("too large: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(fifo, 10); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), fifo) {
			t.Fatalf("fifo: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
	if _, err := Read(link, 10); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("symlink: %v", err)
	}
	if _, err := Read(dir, 10); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("folder: %v", err)
	}
	if _, err := Read("/dev/zero", 10); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("device: %v", err)
	}
}
