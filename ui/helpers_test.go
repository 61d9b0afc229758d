package ui

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/panes/events"
	"github.com/fleetwatch/fleetwatch/ui/panes/inbox"
	"github.com/fleetwatch/fleetwatch/ui/panes/leases"
	"github.com/fleetwatch/fleetwatch/ui/panes/trees"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

func TestMain(m *testing.M) {
	// bubbles' help and textinput style through the default renderer: no
	// colour there either, and no terminal queries.
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
	// Log panes show times of day in local time: UTC here, whatever the
	// machine's zone.
	time.Local = time.UTC
	removeTemp := testkit.MemTemp()
	code := m.Run()
	testkit.RemoveFakeDriver()
	if sampleRoot != "" {
		os.RemoveAll(sampleRoot)
	}
	removeTemp()
	os.Exit(code)
}

// testNow is the moment every test tree's clock stays at.
var testNow = time.Date(2025, 6, 2, 9, 30, 0, 0, time.UTC)

// project is a deterministic sample project: <tmp>/myapp, a git repository
// with one commit, and a .plans/ tree with plans in every lane.
type project struct {
	root string // the temp dir holding myapp/, which no screen may show
	dir  string
	tree *planfs.Tree
}

// The sample tree (ago = before testNow):
//
//	drafts/        dark-mode (no Preferred, no Done when, a bold key without
//	               its bullet: promote warns, the scan warns), tag-suggest
//	bugs/          crash-on-save (P1 high, small), login-timeout (a model no
//	               tier names: fit unknown), flaky-ci (depends on ci-image,
//	               which is still open: unmet)
//	features/      ci-image, rotate-keys (alice's), search (depends on
//	               save-notes, completed: met)
//	in-progress/   export-pdf (mid-1, live, 50m left), old-import (small-2,
//	               expired an hour ago)
//	review-needed/ csv-import   ambiguous/ improve-perf (from features/)
//	blocked/       email-reminders (from bugs/)   completed/ save-notes
var samplePlans = []struct {
	lane model.Lane
	slug string
	ago  time.Duration
	text string
}{
	{model.Features, "save-notes", 9 * 24 * time.Hour, plan("Save notes to disk", "high", "P2", "mid", "", "none")},
	{model.Features, "csv-import", 8 * 24 * time.Hour, plan("Import notes from CSV", "medium", "P2", "reasoner, claude-sonnet", "", "none")},
	{model.Features, "improve-perf", 7 * 24 * time.Hour, plan("Make it faster", "medium", "P2", "mid", "", "none")},
	{model.Bugs, "email-reminders", 7*24*time.Hour - time.Hour, plan("Email reminders go out twice", "medium", "P3", "mid", "", "none")},
	{model.Bugs, "crash-on-save", 6 * 24 * time.Hour, plan("Crash when saving a draft", "high", "P1", "small", "", "none")},
	{model.Bugs, "login-timeout", 6*24*time.Hour - time.Hour, plan("Login times out on slow links", "medium", "P2", "qwen3-32b", "", "none")},
	{model.Bugs, "flaky-ci", 6*24*time.Hour - 2*time.Hour, plan("Flaky CI on arm runners", "medium", "P2", "mid", "", "ci-image")},
	{model.Features, "ci-image", 5 * 24 * time.Hour, plan("Build a CI image with the toolchain", "high", "P2", "small, mid", "", "none")},
	{model.Features, "rotate-keys", 5*24*time.Hour - time.Hour, plan("Rotate the signing keys", "high", "P1", "frontier", "alice", "none")},
	{model.Features, "search", 5*24*time.Hour - 2*time.Hour, plan("Search notes by their words", "low", "P3", "reasoner, frontier", "agents", "save-notes")},
	{model.Features, "export-pdf", 4 * 24 * time.Hour, plan("Export a note as PDF", "medium", "P2", "mid", "", "none")},
	{model.Bugs, "old-import", 4*24*time.Hour - time.Hour, plan("Old imports lose their tags", "medium", "P2", "small", "", "none")},
	{model.Drafts, "tag-suggest", 3 * 24 * time.Hour, plan("Suggest tags while typing", "medium", "P3", "small, mid", "", "none")},
	{model.Drafts, "dark-mode", 3*24*time.Hour - time.Hour, "# Dark mode\n\n**Priority:** P3\n\nFollow the system setting and add a toggle.\n"},
}

// plan writes a plan's text from its header fields.
func plan(title, value, pri, preferred, assignee, deps string) string {
	var b strings.Builder
	b.WriteString("# " + title + "\n\n")
	b.WriteString("- **Value:** " + value + "\n- **Priority:** " + pri + "\n")
	b.WriteString("- **Preferred models:** " + preferred + "\n")
	if assignee != "" {
		b.WriteString("- **Assignee:** " + assignee + "\n")
	}
	b.WriteString("- **Depends on:** " + deps + "\n\n")
	b.WriteString("## Goal\n" + title + ", for everyone, every time.\n\n")
	b.WriteString("## Done when\n- [ ] a test shows it\n")
	return b.String()
}

// newProject is a copy of the sample project in the test's own temp dir.
// Its tree's clock is left at testNow.
func newProject(t testing.TB) *project {
	t.Helper()
	sample.once.Do(func() { sample.dir, sample.err = buildSample() })
	if sample.err != nil {
		t.Fatalf("the sample project: %v", sample.err)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "myapp")
	// cp -a keeps the modes and times the sample's clock gave its files.
	if out, err := exec.Command("cp", "-a", sample.dir, dir).CombinedOutput(); err != nil {
		t.Fatalf("copying the sample project: %v\n%s", err, out)
	}
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := &project{root: root, dir: dir, tree: tree}
	p.at(0)
	return p
}

// sample is the sample project, built once for the whole test binary: most
// tests need it, and building it takes about twenty git and fsync calls.
var sample struct {
	once sync.Once
	dir  string
	err  error
}

// buildSample builds the sample project in a temp dir of its own, removed
// by TestMain.
func buildSample() (dir string, err error) {
	root, err := os.MkdirTemp("", "fleetwatch-ui-sample-")
	if err != nil {
		return "", err
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return "", err
	}
	sampleRoot = root
	b := &sampleBuilder{}
	done := make(chan struct{})
	// makeSample fails through Fatalf, which ends its goroutine.
	go func() {
		defer close(done)
		makeSample(b, root)
		b.ok = true
	}()
	<-done
	if !b.ok {
		return "", errors.New(b.msg)
	}
	return filepath.Join(root, "myapp"), nil
}

// sampleRoot is removed by TestMain when the tests are done.
var sampleRoot string

// sampleBuilder is the testing.TB makeSample reports to: its first
// failure ends the build.
type sampleBuilder struct {
	testing.TB
	ok  bool
	msg string
}

func (b *sampleBuilder) Helper() {}

func (b *sampleBuilder) Fatal(args ...any) { b.msg = fmt.Sprint(args...); runtime.Goexit() }

func (b *sampleBuilder) Fatalf(format string, args ...any) {
	b.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// makeSample writes the sample project into root/myapp.
func makeSample(t testing.TB, root string) {
	t.Helper()
	p := &project{root: root, dir: filepath.Join(root, "myapp")}
	var err error
	if err := os.Mkdir(p.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p.git(t, 0, "init", "-q", "-b", "main")
	p.git(t, 0, "config", "user.name", "Test Operator")
	p.git(t, 0, "config", "user.email", "op@myapp.invalid")
	p.git(t, 0, "config", "commit.gpgsign", "false")
	if _, err := planfs.Scaffold(p.dir); err != nil {
		t.Fatal(err)
	}
	if p.tree, err = planfs.Open(p.dir); err != nil {
		t.Fatal(err)
	}
	tr := p.tree
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for _, s := range samplePlans {
		p.at(s.ago)
		_, err := tr.AddPlanAt(s.lane, s.slug+".md", s.text, testNow.Add(-s.ago))
		check("add "+s.slug, err)
	}
	p.at(3*24*time.Hour - 2*time.Hour)
	rel, err := tr.Claim("features/save-notes.md", "mid-1", 3600)
	check("claim save-notes", err)
	_, err = tr.Complete(rel, model.Completed, planfs.Actor{AgentID: "mid-1"})
	check("complete save-notes", err)

	p.at(2 * 24 * time.Hour)
	rel, err = tr.Claim("features/csv-import.md", "reasoner-1", 3600)
	check("claim csv-import", err)
	p.at(2*24*time.Hour - 5*time.Hour)
	_, err = tr.Complete(rel, model.ReviewNeeded, planfs.Actor{AgentID: "reasoner-1"})
	check("complete csv-import", err)

	p.at(26 * time.Hour)
	_, err = tr.Park("features/improve-perf.md", model.Ambiguous, planfs.Actor{AgentID: "mid-2"}.Because("no target: which pages are slow?"))
	check("park improve-perf", err)
	p.at(25 * time.Hour)
	_, err = tr.Park("bugs/email-reminders.md", model.Blocked, planfs.Actor{AgentID: "mid-2"}.Because("needs SMTP credentials"))
	check("park email-reminders", err)

	// small-2 died holding old-import: its lease ran out an hour ago.
	p.at(2 * time.Hour)
	_, err = tr.Claim("bugs/old-import.md", "small-2", 3600)
	check("claim old-import", err)
	// mid-1 took export-pdf ten minutes ago.
	p.at(10 * time.Minute)
	_, err = tr.Claim("features/export-pdf.md", "mid-1", 3600)
	check("claim export-pdf", err)

	p.git(t, 5*time.Minute, "add", "-A")
	p.git(t, 5*time.Minute, "commit", "-q", "-m", "plans")
}

// at sets the tree's clock to ago before testNow.
func (p *project) at(ago time.Duration) {
	tm := testNow.Add(-ago)
	p.tree.Now = func() time.Time { return tm }
}

// gitIn runs git in dir (the project when empty) with commit dates ago before
// testNow, away from the user's own git config.
func (p *project) gitIn(t testing.TB, dir string, ago time.Duration, args ...string) {
	t.Helper()
	if dir == "" {
		dir = p.dir
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	date := "@" + strconv.FormatInt(testNow.Add(-ago).Unix(), 10) + " +0000"
	cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// git runs git in the project.
func (p *project) git(t testing.TB, ago time.Duration, args ...string) {
	t.Helper()
	p.gitIn(t, "", ago, args...)
}

// addWorktrees gives two agents worktrees: mid-1 on feature/export-pdf one
// commit ahead of dev, small-2 on its own branch with an untracked file.
func (p *project) addWorktrees(t testing.TB) {
	t.Helper()
	wt, err := seat.Ensure(p.dir, "mid-1", "export-pdf")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt.Path, "pdf.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.gitIn(t, wt.Path, 4*time.Minute, "add", "pdf.go")
	p.gitIn(t, wt.Path, 4*time.Minute, "commit", "-q", "-m", "pdf: start")
	// A one-port range far from common services, so the golden is the same
	// on every machine.
	if _, err := look.AssignPort(p.dir, "mid-1", look.PortRange{Lo: 47213, Hi: 47213}); err != nil {
		t.Fatal(err)
	}
	wt, err = seat.Ensure(p.dir, "small-2", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt.Path, "scratch.txt"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// options are the unit tests' program options: no colour, no watcher.
func (p *project) options() uictx.Options {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	r.SetHasDarkBackground(true)
	return uictx.Options{Tree: p.tree, Agent: "op", MarkdownStyle: "notty", Renderer: r, NoWatch: true}
}

// exists reports whether rel is a file in the tree.
func (p *project) exists(rel string) bool {
	_, err := os.Lstat(p.tree.Abs(rel))
	return err == nil
}

// lane returns the rels a fresh scan finds in lane.
func (p *project) lane(t testing.TB, l model.Lane) []string {
	t.Helper()
	snap, err := p.tree.Scan()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := range snap.Plans {
		if snap.Plans[i].Lane == l {
			out = append(out, snap.Plans[i].Rel)
		}
	}
	sort.Strings(out)
	return out
}

// lastEvent is the newest line of the event log.
func (p *project) lastEvent(t testing.TB) planfs.Event {
	t.Helper()
	evs, err := p.tree.Events()
	if err != nil || len(evs) == 0 {
		t.Fatalf("no events: %v", err)
	}
	return evs[len(evs)-1]
}

// state is everything under .plans/ (file contents and mtimes), to show an
// action changed nothing.
func (p *project) state(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(p.tree.Plans, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() == ".lock" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p.tree.Plans, path)
		b.WriteString(rel + " " + fi.ModTime().String() + "\n" + string(data) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// harness drives a Model the way the program does, but synchronously: each
// command runs, and the messages the model itself asked for are fed back
// until nothing is pending. Timers a test does not want (the countdown tick)
// are kept off; cursor blinks are dropped.
type harness struct {
	t    testing.TB
	p    *project
	m    Model
	quit bool
	// bg receives what the log panes' waits bring, which may take long:
	// pumpLogs feeds it to the model.
	bg chan tea.Msg
}

// newHarness opens the UI on p at w×h and waits for the first load.
func newHarness(t testing.TB, p *project, w, h int) *harness {
	t.Helper()
	return newHarnessWith(t, p, p.options(), w, h)
}

// newHarnessWith is newHarness with other options.
func newHarnessWith(t testing.TB, p *project, opt uictx.Options, w, h int) *harness {
	t.Helper()
	m := New(opt)
	// Countdowns move, and the queue is read again, only when a test sends
	// a tickMsg or mergeTickMsg itself: a real 3 s tick would hold settle.
	m.ticking = true
	m.merge.ticking = true
	// A blinking cursor asks for a 530 ms timer on every keystroke; typing
	// in unit tests does not need it.
	for p := range paneCount() {
		m.paneOf(p).FilterOf().Input.Cursor.SetMode(cursor.CursorStatic)
	}
	m.staticCursors = true
	// Status messages stay: a fade timer would hold settle for seconds.
	m.holdStatus = true
	hs := &harness{t: t, p: p, m: m, bg: make(chan tea.Msg, 64)}
	t.Cleanup(hs.m.Close)
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.settle(hs.m.Init())
	if hs.m.d == nil {
		t.Fatalf("the tree did not load: %v", hs.m.loadErr)
	}
	return hs
}

func (h *harness) update(msg tea.Msg) tea.Cmd {
	next, cmd := h.m.Update(msg)
	h.m = next.(Model)
	return cmd
}

// send applies msg and settles what it starts.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	h.settle(h.update(msg))
}

// settle runs cmd and everything it leads to, feeding back the messages
// the model answers (loads, worktrees, actions, previews).
func (h *harness) settle(cmd tea.Cmd) {
	h.t.Helper()
	results := make(chan tea.Msg, 64)
	pending := 0
	start := func(c tea.Cmd) {
		if c == nil {
			return
		}
		pending++
		go func() { results <- c() }()
	}
	start(cmd)
	deadline := time.After(20 * time.Second)
	for pending > 0 {
		select {
		case msg := <-results:
			pending--
			switch msg := msg.(type) {
			case tea.BatchMsg:
				for _, c := range msg {
					start(c)
				}
			case tea.QuitMsg:
				h.quit = true
			case loadedMsg, uictx.WorktreesMsg, uictx.ActionMsg, answeredMsg, settleMsg, previewDueMsg, previewMsg,
				workersMsg, spawnFormMsg, spawnedMsg, detailMsg, uictx.InboxMsg, uictx.FleetMsg:
				start(h.update(msg))
			case logOpenedMsg, logLinesMsg:
				h.background(h.update(msg))
			}
		case <-deadline:
			h.t.Fatal("the model's commands did not settle in 20 s")
		}
	}
}

// background runs cmd, a wait for a log's next lines, off the harness's
// books: its message goes to h.bg.
func (h *harness) background(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				h.background(c)
			}
			return
		}
		h.bg <- msg
	}()
}

// pumpLogs feeds the log panes what their tails deliver until ok, failing
// after 10 s.
func (h *harness) pumpLogs(what string, ok func() bool) {
	h.t.Helper()
	deadline := time.After(10 * time.Second)
	for !ok() {
		select {
		case msg := <-h.bg:
			switch msg.(type) {
			case logOpenedMsg, logLinesMsg:
				h.background(h.update(msg))
			case nil:
			default:
				h.settle(h.update(msg))
			}
		case <-deadline:
			h.t.Fatalf("after 10 s: %s\n%s", what, h.m.View())
		}
	}
}

// keyMsg turns a key name as tea prints it into a key message.
func keyMsg(k string) tea.KeyMsg {
	names := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "esc": tea.KeyEsc, "tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"home": tea.KeyHome, "end": tea.KeyEnd, "ctrl+c": tea.KeyCtrlC, "backspace": tea.KeyBackspace,
		"ctrl+d": tea.KeyCtrlD, "ctrl+u": tea.KeyCtrlU, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown,
		" ": tea.KeySpace,
	}
	if kt, ok := names[k]; ok {
		return tea.KeyMsg{Type: kt}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// press sends keys one by one.
func (h *harness) press(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		opened := h.m.dialogShown() == nil
		cmd := h.update(keyMsg(k))
		if opened && h.m.dialogShown() != nil && h.m.dialogShown().Input != nil {
			// A dialog with a text field opened: its only command is the
			// field's first cursor blink, a 530 ms timer. Drop it and stop
			// the blinking.
			h.staticCursor()
			continue
		}
		h.settle(cmd)
		h.staticCursor()
	}
}

// staticCursor stops a dialog's text field blinking, as newHarness does
// for the filter.
func (h *harness) staticCursor() {
	if d := h.m.dialogShown(); d != nil && d.Input != nil && d.Input.Cursor.Mode() != cursor.CursorStatic {
		d.Input.Cursor.SetMode(cursor.CursorStatic)
	}
}

// typeText types s a rune at a time.
func (h *harness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

// selected is the rel of the plan under the cursor, "" when none.
func (h *harness) selected() string {
	if r := h.m.selectedPlan(); r != nil {
		return r.Plan.Rel
	}
	return ""
}

// rows is the rels the plans table lists now.
func (h *harness) rows() []string {
	var out []string
	for _, r := range plansOf(&h.m).Rows() {
		out = append(out, r.Plan.Rel)
	}
	return out
}

// selectPlan goes to rel's lane with ] and moves the cursor onto it with j,
// as an operator would.
func (h *harness) selectPlan(rel string) {
	h.t.Helper()
	h.press("1")
	lane, _, err := planfs.SplitRel(rel)
	if err != nil {
		h.t.Fatal(err)
	}
	for i := 0; plansOf(&h.m).Lane() != lane; i++ {
		if i > len(model.Lanes) {
			h.t.Fatalf("never reached lane %s", lane)
		}
		h.press("]")
	}
	h.press("g")
	for i := 0; h.selected() != rel; i++ {
		if i > len(plansOf(&h.m).Rows()) {
			h.t.Fatalf("%s is not in the %s rows %v", rel, lane, h.rows())
		}
		h.press("j")
	}
}

// view is the screen, checked to fit: exactly height lines, none wider than
// the terminal, no escape codes (the profile is Ascii) and no temp path.
func (h *harness) view() string {
	h.t.Helper()
	v := h.m.View()
	checkScreen(h.t, v, h.m.Width, h.m.Height, h.p)
	// The selection's reverse video is checked where it is tested; the
	// rest read the text.
	return unreverse(v)
}

// footer is the screen's last line: the status and the key reminders.
func (h *harness) footer() string {
	lines := strings.Split(h.view(), "\n")
	return lines[len(lines)-1]
}

// dialogOpen reports whether a confirmation dialog is on screen.
func (h *harness) dialogOpen() bool { return h.m.dialogShown() != nil }

func checkScreen(t testing.TB, v string, w, hgt int, p *project) {
	t.Helper()
	lines := strings.Split(v, "\n")
	if len(lines) != hgt {
		t.Errorf("screen has %d lines, want %d", len(lines), hgt)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i+1, n, w, l)
		}
	}
	if strings.Contains(unreverse(v), "\x1b") {
		t.Errorf("escape codes on an Ascii screen: %q", v)
	}
	if p != nil && strings.Contains(v, p.root) {
		t.Errorf("the screen shows the temp path %s", p.root)
	}
}

// leaseOf reads rel's lease file.
func (p *project) leaseOf(rel string) *model.Lease { return p.tree.ReadLease(rel) }

// unreverse drops the reverse video that marks the selection on an Ascii
// screen, the one escape code such a screen has.
func unreverse(v string) string {
	return strings.NewReplacer(uictx.ReverseOn, "", uictx.ReverseOff, "").Replace(v)
}

// eventsOf is m's Events pane, whose rows the tests read.
func eventsOf(m *Model) *events.Pane { return m.paneOf(eventsPane).(*events.Pane) }

// treesOf is m's Worktrees pane, whose rows the tests read.
func treesOf(m *Model) *trees.Pane { return m.paneOf(worktreesPane).(*trees.Pane) }

// leasesOf is m's Leases pane, whose rows the tests read.
func leasesOf(m *Model) *leases.Pane { return m.paneOf(leasesPane).(*leases.Pane) }

// inboxOf is m's Inbox pane, whose rows the tests read.
func inboxOf(m *Model) *inbox.Pane { return m.paneOf(inboxPane).(*inbox.Pane) }
