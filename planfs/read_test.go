package planfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func TestReadPlan(t *testing.T) {
	tr := mkTree(t, "features/a.md: - **Value:** high", "drafts/d.local.md:")
	text, truncated, err := tr.ReadPlan("features/a.md")
	if err != nil || truncated || text != "# features/a.md\n\n- **Value:** high\n" {
		t.Fatalf("ReadPlan: %q %v %v", text, truncated, err)
	}
	// A symlink to a plan inside the tree reads like Scan lists it.
	os.Symlink(tr.Abs("drafts/d.local.md"), tr.Abs("bugs/inside.md"))
	if text, _, err := tr.ReadPlan("bugs/inside.md"); err != nil || !strings.HasPrefix(text, "# drafts/d.local.md") {
		t.Fatalf("symlink inside: %q %v", text, err)
	}
}

func TestReadPlanRefuses(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	outside := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(outside, []byte("# secret\n"), 0o644)
	os.Symlink(outside, tr.Abs("features/leak.md"))
	os.Symlink(filepath.Join(t.TempDir(), "gone.md"), tr.Abs("features/broken.md"))
	os.Mkdir(tr.Abs("features/dir.md"), 0o755)
	os.WriteFile(tr.Abs("features/bin.md"), []byte("# x\x00\x01"), 0o644)
	if err := syscall.Mkfifo(tr.Abs("features/fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink(tr.Abs("features/fifo.md"), tr.Abs("bugs/to-fifo.md"))
	// A lane symlinked out of the tree takes its plans out with it.
	laneOut := t.TempDir()
	os.WriteFile(filepath.Join(laneOut, "x.md"), []byte("# x\n"), 0o644)
	os.RemoveAll(tr.Abs("blocked"))
	os.Symlink(laneOut, tr.Abs("blocked"))

	for rel, want := range map[string]error{
		"features/missing.md": ErrNotFound,
		"features/leak.md":    ErrUnreadable,
		"features/broken.md":  ErrUnreadable,
		"features/dir.md":     ErrUnreadable,
		"features/bin.md":     ErrUnreadable,
		"features/fifo.md":    ErrUnreadable,
		"bugs/to-fifo.md":     ErrUnreadable,
		"blocked/x.md":        ErrUnreadable,
	} {
		done := make(chan error, 1)
		go func() { _, _, err := tr.ReadPlan(rel); done <- err }()
		var err error
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadPlan hangs", rel)
		}
		var pe *PlanError
		if !errors.Is(err, want) || !errors.As(err, &pe) || pe.Rel != rel || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want a PlanError wrapping %v", rel, err, want)
		}
	}
	for _, rel := range []string{"../outside.md", "features/../../x.md", "archive/a.md", "features/README.md", "features/a.txt", "features/sub/a.md"} {
		if _, _, err := tr.ReadPlan(rel); err == nil || !strings.Contains(err.Error(), "not a plan path") {
			t.Errorf("%s: %v", rel, err)
		}
	}
}

func TestReadPlanTruncatesOnARuneBoundary(t *testing.T) {
	tr := mkTree(t)
	// "é" is two bytes; the odd start puts one across the 1 MiB mark.
	body := "#" + strings.Repeat("é", maxPlanText)
	os.WriteFile(tr.Abs("features/big.md"), []byte(body), 0o644)
	text, truncated, err := tr.ReadPlan("features/big.md")
	if err != nil || !truncated {
		t.Fatalf("big plan: truncated %v, %v", truncated, err)
	}
	if len(text) != maxPlanText-1 || !utf8.ValidString(text) || strings.ContainsRune(text, utf8.RuneError) {
		t.Fatalf("cut badly: %d bytes, ends %q", len(text), text[len(text)-4:])
	}
	// Exactly the limit is whole.
	os.WriteFile(tr.Abs("features/edge.md"), []byte(strings.Repeat("x", maxPlanText)), 0o644)
	if text, truncated, err := tr.ReadPlan("features/edge.md"); err != nil || truncated || len(text) != maxPlanText {
		t.Fatalf("plan of exactly the limit: %d bytes, truncated %v, %v", len(text), truncated, err)
	}
}

func TestReadPlanReplacesInvalidUTF8(t *testing.T) {
	tr := mkTree(t)
	os.WriteFile(tr.Abs("features/latin1.md"), []byte("# caf\xe9\n"), 0o644)
	text, _, err := tr.ReadPlan("features/latin1.md")
	if err != nil || text != "# caf\uFFFD\n" {
		t.Fatalf("invalid UTF-8: %q %v", text, err)
	}
}
