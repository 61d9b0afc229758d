package inputtest

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

func TestNoCommand(t *testing.T) {
	// No command opens the UI, which needs a tree and a terminal.
	if r := fwtest.Run(t, t.TempDir()); r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "no .plans/") || strings.Count(r.Stderr, "\n") != 1 {
		t.Fatalf("no command, no tree: %v", r)
	}
	root := fwtest.NewTree(t)
	if r := fwtest.Run(t, root); r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "needs a terminal") || strings.Count(r.Stderr, "\n") != 1 {
		t.Fatalf("no command, no terminal: %v", r)
	}
	if r := fwtest.Run(t, root, "help"); r.Code != fwtest.ExitOK || !strings.Contains(r.Stdout, "work-once") || !strings.Contains(r.Stdout, "demo") {
		t.Fatalf("help: %v", r)
	}
	if r := fwtest.Run(t, t.TempDir(), "frobnicate"); r.Code != fwtest.ExitError || strings.Count(r.Stderr, "\n") != 1 {
		t.Fatalf("unknown command: %v", r)
	}
}
