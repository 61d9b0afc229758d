package planfs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO planted where a lease belongs must not hang the scan (and with it
// every worker and the UI): it is reported as an unreadable lease.
func TestFIFOLeaseDoesNotHangTheScan(t *testing.T) {
	dir := t.TempDir()
	if _, err := Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".plans", "in-progress", "a.md"), []byte("# A\n"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, ".plans", ".leases", "in-progress__a.md.json"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	tr, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		l := tr.ReadLease("in-progress/a.md")
		if l == nil {
			done <- "no lease"
			return
		}
		done <- l.Corrupt
	}()
	select {
	case got := <-done:
		if !strings.Contains(got, "not a regular file") {
			t.Errorf("lease read as %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO lease hung")
	}
}
