package planfs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadLeaseRaw(t *testing.T) {
	tr := mkTree(t, "features/a.md: - **Value:** high")
	if _, err := tr.Claim("features/a.md", "mid-1", 3600); err != nil {
		t.Fatal(err)
	}
	l := tr.ReadLease("in-progress/a.md")
	if l == nil {
		t.Fatal("no lease after the claim")
	}
	raw, cut, err := tr.ReadLeaseRaw(l.File)
	if err != nil || cut || !strings.Contains(string(raw), `"agent_id"`) || !strings.Contains(string(raw), "mid-1") {
		t.Fatalf("ReadLeaseRaw(%s) = %q, %v, %v", l.File, raw, cut, err)
	}
	leases := filepath.Join(tr.Plans, ".leases")

	// Bytes that are no lease come back as they are.
	junk := []byte("{\"plan\": \"x\x1b[31m")
	os.WriteFile(filepath.Join(leases, "bugs__junk.md.json"), junk, 0o644)
	if raw, _, err := tr.ReadLeaseRaw("bugs__junk.md.json"); err != nil || string(raw) != string(junk) {
		t.Fatalf("corrupt lease: %q, %v", raw, err)
	}

	// A huge file is cut at the limit.
	os.WriteFile(filepath.Join(leases, "bugs__huge.md.json"), []byte(strings.Repeat("x", leaseLimit+10)), 0o644)
	if raw, cut, err := tr.ReadLeaseRaw("bugs__huge.md.json"); err != nil || !cut || len(raw) != leaseLimit {
		t.Fatalf("huge lease: %d bytes, cut %v, %v", len(raw), cut, err)
	}

	// A symlink is never followed, a FIFO never opened, a path never taken.
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("secret"), 0o644)
	os.Symlink(secret, filepath.Join(leases, "bugs__link.md.json"))
	if raw, _, err := tr.ReadLeaseRaw("bugs__link.md.json"); err == nil || strings.Contains(string(raw), "secret") {
		t.Fatalf("symlinked lease read: %q, %v", raw, err)
	}
	if err := syscall.Mkfifo(filepath.Join(leases, "bugs__fifo.md.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.ReadLeaseRaw("bugs__fifo.md.json"); err == nil {
		t.Fatal("a FIFO read as a lease")
	}
	for _, bad := range []string{"", "..", "../a.md", "x/y.json"} {
		if _, _, err := tr.ReadLeaseRaw(bad); err == nil {
			t.Errorf("ReadLeaseRaw(%q) took the name", bad)
		}
	}
	if _, _, err := tr.ReadLeaseRaw("bugs__gone.md.json"); err == nil {
		t.Fatal("a missing lease read")
	}
}
