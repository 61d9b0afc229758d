package ui

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fleetwatch/fleetwatch/workers/look"
)

// A FIFO among the state files (a stray mkfifo, a tool that streams its
// state) blocked the one reading of the state files in open(2): the
// Workers pane never refreshed again for the life of the UI, even after
// the FIFO was gone, and s never opened its form.
func TestFIFOStateFileDoesNotFreezeTheWorkersPane(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	if err := syscall.Mkfifo(filepath.Join(p.dir, filepath.FromSlash(look.StateDir), "pipe.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := p.options()
	opt.Self = "/usr/local/bin/fleetwatch"  // never run: the form only opens
	h := newHarnessWith(t, p, opt, 120, 32) // fails "did not settle" while a reading blocks
	h.press("4")
	if got := h.workerAgents(); len(got) != 5 {
		t.Errorf("workers %v", got)
	}
	h.press("5")
	if v := h.view(); !strings.Contains(v, "pipe.json: not a regular file") {
		t.Errorf("the Events pane does not name the FIFO:\n%s", v)
	}
	h.press("4", "s")
	if h.m.formShown() == nil {
		t.Errorf("s did not open the spawn form:\n%s", h.view())
	}
}
