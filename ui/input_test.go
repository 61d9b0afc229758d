package ui

import (
	"testing"
)

// Bubble Tea hands keys that arrive in one read as one message with
// several runes: over SSH, or with a key held down, "jj" came as one key
// that matched nothing and was dropped (tmux send-keys j j shows it).
// Outside a text field each rune is a key.
func TestKeysThatArriveTogetherAreEachPressed(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	h := newHarness(t, p, 120, 32)
	h.selectWorker(h.workerAgents()[0])
	h.send(keyMsg("jjl"))
	if h.m.logsShown() == nil || h.m.logsShown().panes[0].agent != h.workerAgents()[2] {
		t.Fatalf("jjl in one read: cursor %d, logs open %v", workersOf(&h.m).Cursor, h.m.logsShown() != nil)
	}
	h.pumpLogs("the pane opened", func() bool { return h.m.logsShown().panes[0].open })
	h.press("esc", "1", "/")
	h.send(keyMsg("crash"))
	if got := plansOf(&h.m).Input.Value(); got != "crash" {
		t.Errorf("typed into the filter in one read: %q", got)
	}
}

func TestParkReasonArrowKeysEditText(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("bugs/crash-on-save.md")
	h.press("a")
	h.typeText("waitng")
	h.press("left", "left")
	h.typeText("i")
	h.press("enter")
	if !p.exists("blocked/crash-on-save.md") {
		t.Errorf("the plan did not go to blocked/, the lane on screen before the arrow keys")
	}
	if e := p.lastEvent(t); e.Reason != "waiting" {
		t.Errorf("reason %q, want the corrected %q", e.Reason, "waiting")
	}
}

func TestCtrlCWhileFiltering(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.press("/")
	h.typeText("ci")
	h.press("ctrl+c")
	if !h.quit && plansOf(&h.m).Typing {
		t.Error("ctrl+c neither quit nor left the filter")
	}
}
