package ui

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/forgesync"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers/forge"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// The forge in the cockpit (issue 43): the records are written as the
// engine writes them (var/fleet/forge/<slug>.json), so no forge is needed
// but for the background reading's test, whose forge never answers.

// prURL is csv-import's PR on the test's forge.
const prURL = "https://git.example.com/team/myapp/pulls/12"

// withForge gives p a forge: section pointing at url.
func (p *project) withForge(t testing.TB, url string) {
	t.Helper()
	t.Setenv("FLEETWATCH_TEST_FORGE_TOKEN", "secret-token")
	path := filepath.Join(p.dir, "fleetwatch.yaml")
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	text := string(old) + "\nforge:\n  kind: gitea\n  url: " + url + "\n  repo: team/myapp\n  token_env: FLEETWATCH_TEST_FORGE_TOKEN\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writePR writes slug's PR record as the engine does.
func (p *project) writePR(t testing.TB, slug string, pr landing.PR) {
	t.Helper()
	dir := filepath.Join(p.dir, "var", "fleet", "forge")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(pr, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, slug+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// samplePR is csv-import's PR: open, its checks passed, one comment by
// alice on a line waiting in the inbox.
func samplePR() landing.PR {
	return landing.PR{Number: 12, URL: prURL, State: "open", Checks: "success", Branch: "fleetwatch/csv-import",
		Tip: "abc1234def", Pushed: "abc1234def", Head: "abc1234def", Read: testNow.Add(-2 * time.Minute),
		Trouble: "statuses: 502 Bad Gateway",
		Comments: []forge.Comment{{ID: 7, Author: "alice", Body: "Please rename this\nto importCSV, it reads better.",
			Path: "csv/import.go", Line: 42, At: testNow.Add(-10 * time.Minute)}}}
}

// fakeBrowser is a real program that writes its arguments, one a line,
// to the file it returns, and lingers as a browser would.
func fakeBrowser(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "argv")
	prog := filepath.Join(dir, "browser")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + out + ".tmp\nmv " + out + ".tmp " + out + "\nsleep 1\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", prog)
	return out
}

// waitFile is the file at path once it exists, within 10 s.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil {
			return string(b)
		}
	}
	t.Fatalf("%s was not written in 10 s", path)
	return ""
}

// The Merge pane shows each candidate's PR as a column, its facts in the
// detail, and o opens it with $BROWSER, the address one argument; on a
// candidate without a PR, o says why not.
func TestForgePRColumnDetailAndOpen(t *testing.T) {
	p := newProject(t)
	p.withForge(t, "http://127.0.0.1:1")
	p.writePR(t, "csv-import", samplePR())
	p.git(t, 0, "branch", "dev") // the integration branch
	if _, err := p.tree.AddPlanAt(model.ReviewNeeded, "theme-engine.md", plan("Theme engine", "3", "P2", "mid", "", "none"), testNow.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	argv := fakeBrowser(t)
	h := newHarness(t, p, 160, 40)
	h.press("6")
	h.send(readMerge(p.dir))
	v := h.view()
	if !strings.Contains(v, " PR ") || !strings.Contains(v, "#12 open ✓") {
		t.Fatalf("no PR column with #12 open ✓:\n%s", v)
	}
	h.selectSlug("theme-engine")
	h.press("o")
	if st := h.m.status; !strings.Contains(st, "theme-engine has no PR yet") {
		t.Errorf("o on a candidate without a PR says %q", st)
	}
	h.selectSlug("csv-import")
	h.press("?")
	if help := h.view(); !strings.Contains(help, "open PR") || !strings.Contains(help, "read forge") {
		t.Errorf("the help lacks o and r:\n%s", help)
	}
	h.press("esc", "enter")
	v = h.view()
	for _, want := range []string{"Pull request", "#12 open · checks success", prURL, "read " + testNow.Add(-2*time.Minute).Local().Format(time.DateTime),
		"⚠ statuses: 502 Bad Gateway", "1 comment from people waiting in the inbox (7)"} {
		if !strings.Contains(v, want) {
			t.Errorf("the detail lacks %q:\n%s", want, v)
		}
	}
	h.press("esc", "o")
	if got := waitFile(t, argv); got != prURL+"\n" {
		t.Fatalf("the browser was given %q, want the PR's address as one argument", got)
	}
	if st := h.m.status; !strings.Contains(st, "opened "+prURL) {
		t.Errorf("the status line says %q", st)
	}
}

// A hostile address is never opened: o refuses it in the status line and
// starts nothing.
func TestForgeOpenRefusesOtherSchemes(t *testing.T) {
	p := newProject(t)
	p.withForge(t, "http://127.0.0.1:1")
	pr := samplePR()
	pr.URL = "file:///etc/passwd"
	p.writePR(t, "csv-import", pr)
	p.git(t, 0, "branch", "dev")
	argv := fakeBrowser(t)
	h := newHarness(t, p, 160, 40)
	h.press("6")
	h.send(readMerge(p.dir))
	h.selectSlug("csv-import")
	h.press("o")
	if st := h.m.status; !strings.Contains(st, "only http and https") {
		t.Errorf("o on a file address says %q", st)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(argv); err == nil {
		t.Fatal("the browser was started on a file address")
	}
}

// Without a forge, the Merge pane has no PR column and no o or r.
func TestForgeNothingWithoutAForge(t *testing.T) {
	p := newProject(t)
	p.writePR(t, "csv-import", samplePR()) // a record, but no forge: section
	p.git(t, 0, "branch", "dev")
	h := newHarness(t, p, 160, 40)
	h.press("6")
	h.send(readMerge(p.dir))
	if v := h.view(); strings.Contains(v, "#12") || strings.Contains(v, " PR ") {
		t.Fatalf("a PR column without a forge:\n%s", v)
	}
	h.press("?")
	if v := h.view(); strings.Contains(v, "open PR") || strings.Contains(v, "read forge") {
		t.Fatalf("o or r in the help without a forge:\n%s", v)
	}
}

// People's comments on the forge wait in the Inbox: a row per comment,
// its text in the preview, and D (asked first) takes them out.
func TestForgeCommentInInboxAndDismiss(t *testing.T) {
	p := newProject(t)
	p.withForge(t, "http://127.0.0.1:1")
	p.writePR(t, "csv-import", samplePR())
	h := newHarness(t, p, 160, 40)
	h.press("7")
	h.send(inboxCmd(p.tree, "notty", 150)())
	v := h.view()
	for _, want := range []string{"comment on PR #12", "alice", "csv/import.go:42: Please rename this",
		"comment on PR #12 by alice · csv/import.go:42", "to importCSV, it reads better.", prURL} {
		if !strings.Contains(v, want) {
			t.Errorf("the inbox lacks %q:\n%s", want, v)
		}
	}
	if !strings.Contains(h.footer(), "dismiss comments") {
		t.Errorf("the footer does not offer D:\n%s", h.footer())
	}
	h.press("D")
	if !h.dialogOpen() {
		t.Fatalf("D asked nothing:\n%s", h.view())
	}
	h.press("y")
	if st := h.m.status; !strings.Contains(st, "dismissed the 1 comment on PR #12") {
		t.Errorf("the status line says %q", st)
	}
	pr, err := landing.ReadPR(p.dir, "csv-import")
	if err != nil || pr == nil || len(pr.Comments) != 0 || pr.Number != 12 {
		t.Fatalf("after D the record is %+v, %v; want PR #12 without comments", pr, err)
	}
	if v := h.view(); strings.Contains(v, "alice") {
		t.Fatalf("the comment is still listed:\n%s", v)
	}
}

// hangingForge is a loopback listener that takes connections and never
// answers; conns counts them.
func hangingForge(t *testing.T) (url string, conns *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns = new(atomic.Int32)
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			mu.Lock()
			held = append(held, c) // open, and silent
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	return "http://" + ln.Addr().String(), conns
}

// The forge is read off the UI goroutine: with a forge that never
// answers, every message and key the cockpit takes returns at once, a
// second r while the reading runs starts none, and the reading's end
// (when the forge kind fails at once) is a notice line, not a crash.
func TestForgeSyncNeverBlocksTheUI(t *testing.T) {
	url, conns := hangingForge(t)
	p := newProject(t)
	p.withForge(t, url)
	p.git(t, 0, "branch", "dev")
	m := New(p.options())
	t.Cleanup(m.Close)
	msgs := make(chan tea.Msg, 256)
	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			msg := c()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					run(c)
				}
				return
			}
			msgs <- msg
		}()
	}
	update := func(msg tea.Msg, bound bool) {
		start := time.Now()
		next, cmd := m.Update(msg)
		m = next.(Model)
		if took := time.Since(start); bound && took > 100*time.Millisecond {
			t.Errorf("Update(%T) took %v with the forge hanging", msg, took)
		}
		run(cmd)
	}
	update(tea.WindowSizeMsg{Width: 160, Height: 40}, false)
	run(m.Init())
	// The cockpit runs as a program would: every message it asked for
	// comes back, and keys come between them.
	var done *forgesync.DoneMsg
	keys := []string{"6", "r", "j", "r", "k"}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && (len(keys) > 0 || (done == nil && conns.Load() == 0)) {
		select {
		case msg := <-msgs:
			switch msg := msg.(type) {
			case forgesync.DoneMsg:
				done = &msg
			case forgesync.OnMsg:
				if !msg {
					t.Fatal("the project's forge: section was not seen")
				}
			}
			_, forgeMsg := msg.(forgesync.DoneMsg)
			_, onMsg := msg.(forgesync.OnMsg)
			update(msg, forgeMsg || onMsg)
		case <-time.After(50 * time.Millisecond):
			if len(keys) > 0 && m.merge.forge.View().On {
				update(keyMsg(keys[0]), true)
				keys = keys[1:]
			}
		}
	}
	if len(keys) > 0 {
		t.Fatalf("the cockpit never saw the forge (keys left: %q)", keys)
	}
	switch {
	case done != nil:
		// No client for the kind on this build: the reading failed at
		// once, and says so above the queue.
		t.Logf("the reading ended at once: %v", done.Err)
		if v := ansi.Strip(m.View()); !strings.Contains(v, "⚠ forge: ") {
			t.Errorf("the reading's error is not shown:\n%s", v)
		}
	default:
		// The reading waits on the forge; the UI went on without it,
		// and the second r started no other reading.
		t.Logf("the reading waits on the forge (%d connection)", conns.Load())
		if !m.merge.forge.View().Busy {
			t.Error("the reading is not under way")
		}
		time.Sleep(300 * time.Millisecond)
		if n := conns.Load(); n != 1 {
			t.Errorf("%d connections to the forge, want 1: one reading at a time", n)
		}
	}
}

// BenchmarkMergeHundredPRs is a listing of 100 candidates with open PRs
// taken in by the cockpit and drawn: the Merge pane's share of "100 open
// PRs list in ≤ 1 s" (the records are read by landing.List, off the UI
// goroutine).
func BenchmarkMergeHundredPRs(b *testing.B) {
	p := newProject(b)
	h := newHarness(b, p, 160, 48)
	h.press("6")
	var l landing.Listing
	l.Integration, l.Tip = "dev", "1a2b3c4d5e6f"
	for i := range 100 {
		pr := samplePR()
		pr.Number = 100 + i
		slug := "plan-" + strings.Repeat("x", i%7) + kit.Itoa(i)
		l.Items = append(l.Items, landing.Status{Slug: slug, Rel: "review-needed/" + slug + ".md", State: landing.Approved,
			Branch: "feature/" + slug, Commit: "abcdef012345", Ahead: 1, PR: &pr})
	}
	b.ResetTimer()
	for range b.N {
		h.update(mergeMsg{listing: l})
		if v := h.m.View(); !strings.Contains(v, "#100 open ✓") {
			b.Fatalf("no PR column:\n%s", v)
		}
	}
}

// Over `fleetwatch serve` the cockpit runs on the server: o starts no
// browser there, it shows the PR's address in the status line.
func TestForgeOpenServedShowsTheAddress(t *testing.T) {
	p := newProject(t)
	p.withForge(t, "http://127.0.0.1:1")
	argv := fakeBrowser(t)
	hub := newHub(t, p)
	opt := p.options()
	opt.Hub = hub
	m := New(opt)
	t.Cleanup(m.Close)
	update := func(msg tea.Msg) tea.Cmd {
		next, cmd := m.Update(msg)
		m = next.(Model)
		return cmd
	}
	update(tea.WindowSizeMsg{Width: 160, Height: 40})
	pr := samplePR()
	update(mergeMsg{listing: landing.Listing{Integration: "dev", Tip: "1a2b3c4d5e6f", Items: []landing.Status{
		{Slug: "csv-import", Rel: "review-needed/csv-import.md", State: landing.NeedsReview, Branch: "feature/csv-import", Commit: "abc1234def", Ahead: 1, PR: &pr}}}})
	update(keyMsg("6"))
	update(keyMsg("o")) // its command is the status line's fade, not run here
	if st := m.status; !strings.Contains(st, prURL) || !strings.Contains(st, "runs on the server") {
		t.Errorf("o in a served session says %q, want the address", st)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(argv); err == nil {
		t.Fatal("a served session started a browser on the server")
	}
}
