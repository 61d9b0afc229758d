package ui

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// helpText is the whole `?` screen of the shown pane, every line, not
// only the visible ones, its runs of spaces made one: a key, its words and
// its reason read as one phrase however they were wrapped.
func (h *harness) helpText() string {
	h.t.Helper()
	h.press("?")
	if !h.m.helpShown() {
		h.t.Fatal("? did not open the help")
	}
	text := ansi.Strip(strings.Join(h.m.helpLines(), "\n"))
	h.press("esc")
	return strings.Join(strings.Fields(text), " ")
}

// Every binding of a pane's own KeyMap struct is on its `?` screen: a key
// added to a pane and forgotten in paneBindings fails here.
func TestHelpListsEveryPaneKey(t *testing.T) {
	t.Parallel()
	k := DefaultKeyMap()
	own := map[uictx.PaneID]any{plansPane: &k.Plans, leasesPane: &k.Leases, worktreesPane: &k.Trees, workersPane: &k.Workers,
		eventsPane: &k.Events, mergePane: &k.Merge, inboxPane: &k.Inbox, fleetPane: &k.Fleet}
	for p := range paneCount() {
		listed := paneBindings(&k, p)
		v := reflect.ValueOf(own[p]).Elem()
		for i := range v.NumField() {
			b, ok := v.Field(i).Addr().Interface().(*key.Binding)
			if ok && !slices.Contains(listed, b) {
				t.Errorf("%s pane: %s (%s) is not on its ? screen", paneSpecs[p].name, v.Type().Field(i).Name, b.Help().Desc)
			}
		}
	}
}

// A key that does not apply now is listed anyway, with the reason syncKeys
// gave it; one that applies has no reason beside it.
func TestHelpGreysKeysWithTheirReason(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("bugs/crash-on-save.md")
	text := h.helpText()
	for _, want := range []string{
		"p promote — select a draft",
		"c complete — select an in-progress plan",
		"a park ",
		"Every pane",
		"Merge states (pane 6): needs review no review or approval",
		"ready every check passed on that exact tree: m lands the queue's head",
		"Tier columns (S M R F",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("Plans help lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "a park —") {
		t.Errorf("park applies to a ready bug, yet has a reason:\n%s", text)
	}
	// Each pane lists its own keys, not the others'.
	h.press("6")
	text = h.helpText()
	for _, want := range []string{"Merge pane (6)", "m land head — ", "+ queue — ", "checks ✓ pass"} {
		if !strings.Contains(text, want) {
			t.Errorf("Merge help lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "promote") {
		t.Errorf("Merge help lists the Plans keys:\n%s", text)
	}
}

// At 80×24 nothing on the help screen is cut: every line fits the body,
// and scrolling reaches the last line; any other key closes it.
func TestHelpFitsAndScrolls(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	for pn := range paneCount() {
		h.press(kit.Itoa(int(pn) + 1))
		h.press("?")
		lines := h.m.helpLines()
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > h.m.Cols {
				t.Errorf("%s help: a line of %d cells is cut at %d: %q", paneSpecs[pn].name, w, h.m.Cols, l)
			}
		}
		if len(lines) <= h.m.helpVisible() {
			h.press("esc")
			continue
		}
		h.press("G")
		if !h.m.helpShown() {
			t.Fatalf("%s help: G closed a help taller than the screen", paneSpecs[pn].name)
		}
		v := h.view()
		if last := strings.TrimSpace(ansi.Strip(lines[len(lines)-1])); !strings.Contains(v, last) {
			t.Errorf("%s help: G does not show the last line %q:\n%s", paneSpecs[pn].name, last, v)
		}
		if !strings.Contains(h.footer(), "of "+kit.Itoa(len(lines))) {
			t.Errorf("%s help: the footer does not say where it is: %q", paneSpecs[pn].name, h.footer())
		}
		h.press("x")
		if h.m.helpShown() {
			t.Errorf("%s help: x did not close it", paneSpecs[pn].name)
		}
	}
}

// The demo's first footer says how to see the fleet work, whole at 80
// columns, until the first key; other sessions never say it.
func TestDemoHintUntilFirstKey(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	opt := p.options()
	opt.Demo = true
	h := newHarnessWith(t, p, opt, 80, 24)
	want := "Try: 4 then s spawns a worker · 6 then m lands a change · ? every key"
	if f := h.footer(); !strings.Contains(f, want) {
		t.Errorf("the demo's first footer %q lacks %q", f, want)
	}
	h.press("j")
	if f := h.footer(); strings.Contains(f, "Try:") {
		t.Errorf("the hint stayed after a key: %q", f)
	}
	if f := newHarness(t, p, 80, 24).footer(); strings.Contains(f, "Try:") {
		t.Errorf("a session that is not the demo has the hint: %q", f)
	}
}

// `?` on the Merge pane with candidates, at 80×24: the keys that act on
// the selected one, those that do not greyed with why, then the states.
func TestGoldenMergeHelp(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 80, 24, sampleListing)
	h.selectSlug("flaky-ci")
	h.press("?")
	text := strings.Join(strings.Fields(h.view()), " ")
	for _, want := range []string{"A approve", "m land head", "+ queue — only approved candidates join the queue; approve flaky-ci first (A)"} {
		if !strings.Contains(text, want) {
			t.Errorf("Merge help lacks %q:\n%s", want, h.view())
		}
	}
	teatest.RequireEqualOutput(t, []byte(h.m.View()))
}
