package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// viewBackend answers View with a view made by claims.Overlay, the real
// overlay code, or with err; it stands in only for the read (the other
// verbs are the embedded nil interface: calling one fails the test with a
// panic, and none of these tests act).
type viewBackend struct {
	claims.Backend
	view *claims.View
	err  error
}

func (b *viewBackend) Name() string { return "git" }

func (b *viewBackend) View(context.Context) (*claims.View, error) { return b.view, b.err }

// remoteView is the sample project's lanes as a remote branch would hold
// them (no lease files), with crash-on-save held live on gpu-box and
// ci-image's lease seen unchanged past its TTL, overlaid; read 7 s ago.
func remoteView(t *testing.T, p *project) *claims.View {
	t.Helper()
	snap, err := p.tree.Scan()
	if err != nil {
		t.Fatal(err)
	}
	snap.Leases = nil
	now := p.tree.NowSeconds()
	lease := func(slug, rel, agent, host string, live bool, seen time.Duration) claims.Remote {
		return claims.Remote{Slug: slug, Version: "v-" + slug, Live: live, SeenFor: seen, Need: 16*time.Minute + 30*time.Second,
			Lease: model.Lease{Plan: rel, AgentID: agent, Host: host, ClaimedAt: now - 600, ExpiresAt: now + 300,
				Origin: rel, Token: "tok-" + slug, TTL: 900, Epoch: 2, Backend: "git"}}
	}
	leases := []claims.Remote{
		lease("crash-on-save", "bugs/crash-on-save.md", "small-7", "gpu-box", true, 2*time.Minute),
		lease("ci-image", "features/ci-image.md", "mid-9", "laptop", false, 20*time.Minute),
	}
	readAt := p.tree.Now().Add(-7 * time.Second)
	return &claims.View{Snapshot: claims.Overlay(snap, leases, now), Leases: leases, Tip: "abc", ReadAt: readAt}
}

func remoteHarness(t *testing.T, w, h int) (*harness, *viewBackend) {
	t.Helper()
	p := newProject(t)
	b := &viewBackend{view: remoteView(t, p)}
	opt := p.options()
	opt.Claims = &claims.Opened{Backend: b, Where: "git origin"}
	return newHarnessWith(t, p, opt, w, h), b
}

// A remote lease shows like a local one, with where it is held, in the
// plans table, the leases list, a dialog and the header's age of the view,
// at 80×24 and wide.
func TestRemoteLeasesShowHeldOnHost(t *testing.T) {
	t.Parallel()
	h, _ := remoteHarness(t, 80, 24)
	if got := h.m.feed.claims().view; got == nil {
		t.Fatalf("no remote view read; load error %v, remote error %v", h.m.loadErr, h.m.feed.claims().err)
	}
	head := strings.SplitN(h.view(), "\n", 2)[0]
	if !strings.Contains(head, "git 7 s ago") {
		t.Errorf("80-column header lacks the view's age: %q", head)
	}
	h.selectPlan("in-progress/crash-on-save.md")
	if v := h.view(); !strings.Contains(v, "held on gpu-box") {
		t.Errorf("in-progress lane does not say where crash-on-save is held:\n%s", v)
	}
	if r := h.m.selectedPlan(); r.Lease == nil || r.Lease.Backend != "git" {
		t.Fatalf("crash-on-save is not under a remote lease: %+v", r.Lease)
	}
	// An expired remote lease is marked expired, with its host.
	h.selectPlan("in-progress/ci-image.md")
	if v := h.view(); !strings.Contains(v, "EXPIRED mid-9 held on laptop") {
		t.Errorf("ci-image's expired remote lease is not shown as such:\n%s", v)
	}
	h.press("2")
	v := h.view()
	for _, want := range []string{"small-7 held on gpu-box", "mid-9 held on laptop", "EXPIRED"} {
		if !strings.Contains(v, want) {
			t.Errorf("leases pane lacks %q:\n%s", want, v)
		}
	}
	if n := leasesOf(&h.m).Len(); n != 2 {
		t.Errorf("leases pane lists %d leases, want the 2 remote ones", n)
	}
	h.send(keyMsg("enter"))
	if v := h.view(); !strings.Contains(v, "refs/fleetwatch/leases/") || !strings.Contains(v, "takeover needs") {
		t.Errorf("a remote lease's detail does not say where it is kept and how long it was seen:\n%s", v)
	}
	h.press("esc")

	h.send(tea.WindowSizeMsg{Width: 120, Height: 32})
	head = strings.SplitN(h.view(), "\n", 2)[0]
	if !strings.Contains(head, "claims: git origin · read 7 s ago") {
		t.Errorf("wide header lacks the claims backend and the view's age: %q", head)
	}
}

// A remote that cannot be read says so with its cause; the last good view
// stays on screen.
func TestRemoteReadFailureKeepsLastView(t *testing.T) {
	t.Parallel()
	// Wide enough for the cause beside eight tabs.
	h, b := remoteHarness(t, 128, 32)
	b.err = errors.New("git fetch origin: could not read from remote repository")
	h.settle(h.m.requestLoad())
	head := strings.SplitN(h.view(), "\n", 2)[0]
	if !strings.Contains(head, "cannot read: git fetch origin") || !strings.Contains(head, "read 7 s ago") {
		t.Errorf("header does not say the remote cannot be read, and how old the view is: %q", head)
	}
	h.selectPlan("in-progress/crash-on-save.md")
	if !strings.Contains(h.view(), "held on gpu-box") {
		t.Errorf("the last good view is gone after a failed read")
	}
	b.err = nil
	h.settle(h.m.requestLoad())
	if h.m.feed.claims().err != nil {
		t.Errorf("a good read leaves the error: %v", h.m.feed.claims().err)
	}
}

// Keys whose verbs only the lease files have are refused with one line in
// a remote project; a release goes to the backend's form (no local check
// that would find no lease file).
func TestRemoteRefusesLocalOnlyKeys(t *testing.T) {
	t.Parallel()
	h, _ := remoteHarness(t, 120, 32)
	h.m.syncKeys()
	if h.m.Keys.Inbox.Approve.Enabled() || h.m.Keys.Inbox.Reject.Enabled() {
		t.Errorf("inbox decisions stay enabled with remote claims")
	}
	if why := h.m.Why["a"]; why == "" {
		t.Errorf("no reason kept for the refused key")
	}
	h.selectPlan("in-progress/crash-on-save.md")
	if !h.m.Keys.Plans.Release.Enabled() {
		t.Fatalf("release of a remote lease is off: %s", h.m.Why["r"])
	}
	h.press("r")
	if !h.dialogOpen() {
		t.Fatalf("r opened no dialog: %s", h.footer())
	}
	if v := h.view(); !strings.Contains(v, "small-7 holds it (held on gpu-box)") {
		t.Errorf("the release dialog does not say where the lease is held:\n%s", v)
	}
}

// Served: the hub reads the remote for every session; a session shows the
// remote plan in progress and acts through the hub's backend.
func TestHubReadsRemoteForSessions(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	b := &viewBackend{view: remoteView(t, p)}
	hub, err := NewHubClaims(p.tree, &claims.Opened{Backend: b, Where: "git origin"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	s := openSession(t, p, hub)
	waitAll(t, []*session{s}, "in-progress/crash-on-save.md", 10*time.Second)
	m := s.close(t)
	if m.feed.claims() == nil || m.feed.claims().view != b.view {
		t.Fatalf("the session has not the hub's remote view: %+v", m.feed.claims())
	}
	if !strings.Contains(m.View(), "git ") {
		t.Errorf("a served session's header does not name the claims backend:\n%s", m.View())
	}
}

// A worker spawned from a face that reads remote claims claims there too,
// whether fleetwatch.yaml or --claims chose the backend.
func TestSpawnFromARemoteFaceClaimsRemotely(t *testing.T) {
	t.Parallel()
	h, _ := remoteHarness(t, 120, 36)
	h.m.Opt.Self = "/usr/local/bin/fleetwatch" // never run: only the spec is read
	h.press("4", "s")
	f := h.m.formShown()
	if f == nil {
		t.Fatalf("s opened no form: %q", h.footer())
	}
	s, err := h.m.formSpec(f)
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(s.Args(), " "); !strings.Contains(args, "--claims git") {
		t.Errorf("spawned worker's command line %q lacks --claims git", args)
	}
}
