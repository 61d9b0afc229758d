package ui

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The countdown tick re-renders plans and leases, but the Events pane's
// "ago" column keeps the age it had at the last load: after ten quiet
// minutes the newest event still reads "10m" instead of "20m".
func TestEventAgesMoveWithTheClock(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 120, 32)
	h.press("5")
	if v := h.view(); !strings.Contains(v, "10m     claim") {
		t.Fatalf("events pane:\n%s", v)
	}
	p.at(-10 * time.Minute)
	h.send(tickMsg(testNow))
	if v := h.view(); !strings.Contains(v, "20m     claim") {
		t.Errorf("ten minutes on, the newest event's age did not move:\n%s", v)
	}
}

// When the event log cannot be read, loadCmd keeps the error in
// data.eventsErr, but nothing ever shows it: the Events pane simply lists
// no events (or says "no events yet").
func TestUnreadableEventLogIsReported(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	log := p.tree.Plans + "/logs/events.jsonl"
	if err := os.Rename(log, log+".bak"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(log, 0o755); err != nil { // unreadable as a log
		t.Fatal(err)
	}
	h := newHarness(t, p, 120, 32)
	h.press("5")
	v := h.view()
	if !strings.Contains(v, "events.jsonl") {
		t.Errorf("nothing on screen says the event log could not be read; the pane just has no events:\n%s", v)
	}
}

// `/` stays enabled on the Leases and Events panes (UI.md: the event log
// is filterable), but the filter only ever narrows the plans table: typed
// on the Events pane it changes nothing there.
func TestFilterOnEventsPaneIsDisabledOrFilters(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 120, 32)
	h.press("5")
	if !h.m.Keys.Filter.Enabled() {
		return // fixed by disabling it here
	}
	before := eventsOf(&h.m).Len()
	h.press("/")
	h.typeText("park")
	h.press("enter")
	if after := eventsOf(&h.m).Len(); after == before {
		t.Errorf("filtering the Events pane for %q left all %d rows:\n%s", "park", after, h.view())
	}
}
