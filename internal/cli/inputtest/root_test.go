package inputtest

import (
	"strings"
	"testing"
)

func TestNoCommand(t *testing.T) {
	// No command opens the UI, which needs a tree and a terminal.
	if r := fw(t, t.TempDir()); r.code != exitError || !strings.Contains(r.stderr, "no .plans/") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("no command, no tree: %v", r)
	}
	root := newTree(t)
	if r := fw(t, root); r.code != exitError || !strings.Contains(r.stderr, "needs a terminal") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("no command, no terminal: %v", r)
	}
	if r := fw(t, root, "help"); r.code != exitOK || !strings.Contains(r.stdout, "work-once") || !strings.Contains(r.stdout, "demo") {
		t.Fatalf("help: %v", r)
	}
	if r := fw(t, t.TempDir(), "frobnicate"); r.code != exitError || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("unknown command: %v", r)
	}
}
