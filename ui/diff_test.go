package ui

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// diffProject is the sample project with worktrees, where mid-1 (on
// feature/export-pdf) also committed a binary file, a huge file and a
// 60-line Go file, then left an unstaged edit, a staged file and an
// untracked one; mid-1's state file names its worktree.
func diffProject(t testing.TB) (*project, string) {
	t.Helper()
	p := newProject(t)
	p.addWorktrees(t)
	wt := filepath.Join(p.dir, "var", "worktrees", "mid-1")
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(wt, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var long strings.Builder
	long.WriteString("package main\n\nfunc render() {\n")
	for i := range 60 {
		long.WriteString("\tpage(" + kit.Itoa(i) + ")\n")
	}
	long.WriteString("}\n")
	write("render.go", long.String())
	write("logo.png", "\x89PNG\x00\x00binary")
	write("fonts.txt", strings.Repeat("glyph\n", look.DiffFileLines+1))
	p.gitIn(t, wt, 3*time.Minute, "add", "-A")
	p.gitIn(t, wt, 3*time.Minute, "commit", "-q", "-m", "pdf: render pages")
	write("pdf.go", "package main\n\n// Export writes a PDF.\n")
	write("staged.go", "package main // "+strings.Repeat("wide ", 30)+"END\n")
	p.gitIn(t, wt, 0, "add", "staged.go")
	write("todo.txt", "fonts\nmargins\n")
	st := look.State{PID: 1, AgentID: "mid-1", Tier: "mid", Host: "build-7", State: look.StateRunning, Worktree: wt,
		Plan: p.tree.Abs("in-progress/export-pdf.md"), Started: look.Stamp{Time: testNow}, LastHeartbeat: look.Stamp{Time: testNow}}
	if err := look.WriteState(p.dir, st); err != nil {
		t.Fatal(err)
	}
	return p, wt
}

// openDiff presses d and feeds back the diff the engine computes.
func (h *harness) openDiff() {
	h.t.Helper()
	cmd := h.update(keyMsg("d"))
	if cmd == nil {
		h.t.Fatalf("d did nothing: %s", h.footer())
	}
	if _, ok := h.m.stack.top().(*diffView); !ok {
		h.t.Fatal("d opened no diff view")
	}
	if v := h.view(); !strings.Contains(v, "computing the diff of") {
		h.t.Errorf("before the diff comes:\n%s", v)
	}
	h.send(cmd())
}

func (h *harness) diff() *diffView {
	v, _ := find[*diffView](h.m.stack)
	return v
}

func TestDiffOfPlanOverlay(t *testing.T) {
	t.Parallel()
	p, _ := diffProject(t)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, p, size[0], size[1])
		h.selectPlan("in-progress/export-pdf.md")
		h.openDiff()
		v := h.view()
		base := h.diff().title
		for _, want := range []string{
			"feature/export-pdf vs dev at ", "Committed on feature/export-pdf since dev at ",
			"binary  logo.png", "+2001     −0  fonts.txt  (not shown: more than 2000 changed lines)",
			"+1     −0  pdf.go", "+64     −0  render.go",
		} {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d: no %q on\n%s", size[0], size[1], want, v)
			}
		}
		if size[0] == 160 && !strings.Contains(v, "worktree var/worktrees/mid-1") {
			t.Errorf("wide title %q lacks the worktree:\n%s", base, v)
		}
		if f := h.footer(); !strings.Contains(f, "next/previous file · r ") || !strings.HasSuffix(strings.TrimRight(f, " "), "esc close") {
			t.Errorf("footer %q", f)
		}
		h.press("esc")
		if h.diff() != nil {
			t.Error("esc left the diff open")
		}
	}
}

func TestDiffScrollsAndJumpsBetweenFiles(t *testing.T) {
	t.Parallel()
	p, _ := diffProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("in-progress/export-pdf.md")
	h.openDiff()
	v := h.diff()
	body := func() []string { return strings.Split(h.view(), "\n")[2:22] }
	// The files' headers in order: committed, then uncommitted.
	var heads []string
	for _, i := range v.files {
		heads = append(heads, v.lines[i].text)
	}
	want := []string{"━━ fonts.txt", "━━ logo.png", "━━ pdf.go", "━━ render.go", "━━ pdf.go (uncommitted)", "━━ staged.go (uncommitted)"}
	for i, w := range want {
		if i >= len(heads) || !strings.HasPrefix(heads[i], w) {
			t.Fatalf("file headers %q, want %q", heads, want)
		}
	}
	for _, w := range want[:4] {
		h.press("n")
		if top := body()[0]; !strings.Contains(top, w) {
			t.Errorf("n: top line %q, want %q", top, w)
		}
	}
	// Near the end the view stops at the last line: the header shows
	// lower down.
	h.press("]")
	if screen := strings.Join(body(), "\n"); !strings.Contains(screen, want[4]) {
		t.Errorf("]: no %q on\n%s", want[4], screen)
	}
	h.press("N", "[")
	if top := body()[0]; !strings.Contains(top, want[2]) {
		t.Errorf("N [: top line %q, want %q", top, want[2])
	}
	h.press("G")
	screen := h.view()
	if last := body()[len(body())-1]; !strings.Contains(last, "+package main") || v.off != len(v.lines)-20 {
		t.Errorf("G: the last line %q is not staged.go's, or the position is not the end:\n%s", last, screen)
	}
	h.press("n")
	if last := body()[len(body())-1]; !strings.Contains(last, "+package main") {
		t.Errorf("n at the end moved past it: %q", last)
	}
	// Sideways: the end of staged.go's long line comes into view.
	if strings.Contains(h.view(), "END") {
		t.Error("the long line is not cut at 80 columns")
	}
	h.press("l", "l", "l")
	if screen := h.view(); !strings.Contains(screen, "wide END") || !strings.Contains(screen, "…") {
		t.Errorf("l l l: the long line's end is not shown:\n%s", screen)
	}
	h.press("h", "h", "h")
	if v.x != 0 {
		t.Errorf("h h h: %d columns sideways", v.x)
	}
	h.press("g", "j", "j")
	if v.off != 2 {
		t.Errorf("g j j: at line %d, want 2", v.off)
	}
	h.press("pgdown")
	if v.off != 2+20 {
		t.Errorf("pgdown: at line %d, want %d", v.off, 2+20)
	}
	h.press("k", "pgup", "pgup")
	if v.off != 0 {
		t.Errorf("back up: at line %d", v.off)
	}
}

func TestDiffOfWorktreeAndWorker(t *testing.T) {
	t.Parallel()
	p, _ := diffProject(t)
	h := newHarness(t, p, 160, 48)
	h.press("3")
	h.openDiff()
	if v := h.view(); !strings.Contains(v, "feature/export-pdf vs dev at") || !strings.Contains(v, "Untracked: 1 file") || !strings.Contains(v, "2 lines  todo.txt") {
		t.Errorf("worktrees pane, mid-1:\n%s", v)
	}
	h.press("q", "j")
	h.openDiff()
	if v := h.view(); !strings.Contains(v, "agent/small-2 vs dev at") || !strings.Contains(v, "Committed on agent/small-2 since dev at") || !strings.Contains(v, "1 line  scratch.txt") {
		t.Errorf("worktrees pane, small-2:\n%s", v)
	}
	h.press("esc", "4")
	h.openDiff()
	if v := h.view(); !strings.Contains(v, "feature/export-pdf vs dev at") || !strings.Contains(v, "Uncommitted in var/worktrees/mid-1 (against its HEAD): 2 files, +3 −0") {
		t.Errorf("workers pane, mid-1:\n%s", v)
	}
}

func TestDiffSaysWhyNot(t *testing.T) {
	t.Parallel()
	p, _ := diffProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("bugs/crash-on-save.md")
	h.openDiff()
	if v := h.view(); !strings.Contains(v, "✗ crash-on-save: no branch feature/crash-on-save and no worktree on it") {
		t.Errorf("a plan without a branch:\n%s", v)
	}
	// An answer for a view closed meanwhile opens nothing.
	h.press("esc")
	cmd := h.update(keyMsg("d"))
	h.press("esc")
	h.send(cmd())
	if h.diff() != nil {
		t.Error("a late diff reopened the view")
	}
	// Off a worktree, d says why.
	h.press("3", "G")
	treesOf(&h.m).Loaded(h.m.ctx(), uictx.WorktreesMsg{})
	h.m.syncKeys()
	h.press("d")
	if f := h.footer(); !strings.Contains(f, "diff: select a worktree that is on disk") {
		t.Errorf("d on an empty worktrees pane: %q", f)
	}
}

func TestDiffColours(t *testing.T) {
	t.Parallel()
	p, _ := diffProject(t)
	opt := p.options()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	r.SetHasDarkBackground(true)
	opt.Renderer = r
	h := newHarnessWith(t, p, opt, 160, 48)
	h.selectPlan("in-progress/export-pdf.md")
	// The harness's view() refuses escape codes: read the model's.
	cmd := h.update(keyMsg("d"))
	h.send(cmd())
	h.press("n", "n", "n", "n")
	colour := h.m.View()
	plain := newHarness(t, p, 160, 48)
	plain.selectPlan("in-progress/export-pdf.md")
	plain.openDiff()
	plain.press("n", "n", "n", "n")
	text := plain.view()
	for _, want := range []string{"━━ render.go", "@@ -0,0 +1,64 @@", "+    page(0)"} {
		if !strings.Contains(text, want) {
			t.Errorf("NO_COLOR: no %q:\n%s", want, text)
		}
	}
	for _, want := range []string{"+    page(0)", "@@ -0,0 +1,64 @@", "━━ render.go"} {
		i := strings.Index(colour, want)
		if i < 0 || !strings.Contains(colour[max(0, i-20):i], "\x1b[") {
			t.Errorf("colour: %q is not styled", want)
		}
	}
}

func TestDiffWithNothingChanged(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.m.openDiff("plan x", "plan\x00x", nil)
	h.send(diffMsg{req: "plan\x00other", diff: look.Diff{Branch: "feature/other"}})
	if v := h.view(); !strings.Contains(v, "computing the diff of plan x…") {
		t.Errorf("an answer for another request was taken:\n%s", v)
	}
	h.send(diffMsg{req: "plan\x00x", diff: look.Diff{Branch: "feature/x", Integration: "dev", Base: "0123456789"}})
	v := h.view()
	for _, want := range []string{"feature/x vs dev at 0123456", "0 files, +0 −0", "· nothing changed since dev"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q on\n%s", want, v)
		}
	}
}

func TestDiffShowsRenames(t *testing.T) {
	t.Parallel()
	p, wt := diffProject(t)
	p.gitIn(t, wt, 0, "mv", "render.go", "draw.go")
	h := newHarness(t, p, 160, 48)
	h.selectPlan("in-progress/export-pdf.md")
	h.openDiff()
	v := h.view()
	h.press("G")
	v += h.view()
	for _, want := range []string{"+0     −0  render.go → draw.go", "━━ render.go → draw.go (uncommitted)  +0 −0", "rename from render.go"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q on\n%s", want, v)
		}
	}
}

func TestDiffComputesAgain(t *testing.T) {
	t.Parallel()
	p, wt := diffProject(t)
	h := newHarness(t, p, 80, 24)
	h.selectPlan("in-progress/export-pdf.md")
	h.openDiff()
	h.press("n", "n")
	off := h.diff().off
	// The agent goes on working.
	if err := os.WriteFile(filepath.Join(wt, "more.txt"), []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := h.update(keyMsg("r"))
	if cmd == nil || !h.diff().busy || !strings.Contains(h.view(), "computing again…") {
		t.Fatalf("r: no second computation shown:\n%s", h.view())
	}
	if again := h.update(keyMsg("r")); again != nil {
		t.Error("r while computing started another")
	}
	h.send(cmd())
	if v := h.diff(); v.busy || v.off != off {
		t.Errorf("after r: busy %v, at line %d, want %d", v.busy, v.off, off)
	}
	h.press("g")
	if v := h.view(); !strings.Contains(v, "Untracked: 2 files") || !strings.Contains(v, "3 lines  more.txt") {
		t.Errorf("the new file is not in the diff computed again:\n%s", v)
	}
}
