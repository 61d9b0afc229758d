package forgesync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// forgeTree is a project whose settings name a forge (none answers: run
// is replaced).
func forgeTree(t *testing.T) *planfs.Tree {
	t.Helper()
	dir := t.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	yaml := "forge:\n  kind: gitea\n  url: http://127.0.0.1:1\n  repo: team/api\n  token_env: FW_FORGESYNC_TEST_TOKEN\n"
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// One reading at a time: asked while one runs, one more follows it, and
// the clock starts only for a cockpit that began it.
func TestSyncOneAtATime(t *testing.T) {
	tr := forgeTree(t)
	release := make(chan struct{})
	calls := 0
	run = func(ctx context.Context, _ *planfs.Tree) ([]string, error) {
		calls++
		<-release
		return []string{"a: opened PR #1 https://x/1", "b: approved at abc by \x1b[31malice"}, nil
	}
	t.Cleanup(func() { run = landing.SyncForge })
	var s Sync
	if on := s.Begin(tr)(); on != OnMsg(true) {
		t.Fatalf("Begin saw %v, want a forge", on)
	}
	first := s.On(tr, true)
	if first == nil || !s.View().Busy {
		t.Fatal("the first reading did not start")
	}
	if s.Start(tr) != nil {
		t.Fatal("a second reading started while one runs")
	}
	close(release)
	msg := first().(DoneMsg)
	if !msg.On || calls != 1 {
		t.Fatalf("the reading: %+v after %d calls", msg, calls)
	}
	if next := s.Done(tr, msg); next == nil {
		t.Fatal("the reading asked for meanwhile, and the clock, did not follow")
	}
	if !s.View().Busy || !s.ticking {
		t.Fatalf("after Done: %+v ticking %v; want the next reading under way and the clock", s.View(), s.ticking)
	}
	said := Said(msg)
	if strings.Contains(said, "\x1b") || !strings.Contains(said, "(and 1 more)") {
		t.Errorf("Said = %q: want one clean line and the count of the rest", said)
	}
}

// A failed reading is kept for the Merge pane; a project without a forge
// is looked at once and never read.
func TestSyncErrorsAndNoForge(t *testing.T) {
	tr := forgeTree(t)
	run = func(context.Context, *planfs.Tree) ([]string, error) { return nil, errors.New("forge: 502") }
	t.Cleanup(func() { run = landing.SyncForge })
	var s Sync
	_ = s.On(tr, true)().(DoneMsg)
	s.Done(tr, DoneMsg{On: true, Err: errors.New("forge: 502")})
	if f := s.View(); f.Err == nil || f.Busy || !f.On {
		t.Fatalf("after a failure: %+v", f)
	}
	bare := t.TempDir()
	if _, err := planfs.Scaffold(bare); err != nil {
		t.Fatal(err)
	}
	bt, err := planfs.Open(bare)
	if err != nil {
		t.Fatal(err)
	}
	var n Sync
	if on := n.Begin(bt)(); on != OnMsg(false) {
		t.Fatalf("a project without forge: looked like one with")
	}
	if n.On(bt, false) != nil || n.View().On {
		t.Fatal("a project without a forge started a reading")
	}
}

// o opens only http(s) addresses; served, it names the address instead.
func TestBrowse(t *testing.T) {
	if cmd, say, bad := Browse("javascript:alert(1)", false); cmd != nil || !bad || !strings.Contains(say, "only http and https") {
		t.Errorf("a javascript: address: %v %q %v", cmd != nil, say, bad)
	}
	if cmd, say, bad := Browse("https://x/pulls/3", true); cmd != nil || bad || !strings.Contains(say, "https://x/pulls/3") {
		t.Errorf("served: %v %q %v; want the address said, nothing started", cmd != nil, say, bad)
	}
	if cmd, _, bad := Browse("https://x/pulls/3", false); cmd == nil || bad {
		t.Error("local: want a command that opens the address")
	}
}
