package planfs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
)

// mkTree scaffolds a project and writes plans given as "rel: header lines",
// each line of the header separated by "|".
func mkTree(t testing.TB, plans ...string) *Tree {
	t.Helper()
	dir := t.TempDir()
	if _, err := Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	for i, p := range plans {
		rel, header, _ := strings.Cut(p, ":")
		body := "# " + rel + "\n\n" + strings.ReplaceAll(strings.TrimSpace(header), "|", "\n") + "\n"
		path := filepath.Join(dir, Dir, rel)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-time.Duration(len(plans)-i) * time.Minute)
		os.Chtimes(path, mt, mt)
	}
	tr, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func scan(t testing.TB, tr *Tree) *model.Snapshot {
	t.Helper()
	s, err := tr.Scan()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rels(s *model.Snapshot) []string {
	var out []string
	for _, p := range s.Plans {
		out = append(out, p.Rel)
	}
	return out
}

func warned(s *model.Snapshot, file, substr string) bool {
	for _, w := range s.Warnings {
		if w.File == file && strings.Contains(w.Message, substr) {
			return true
		}
	}
	return false
}

func TestOpenWithoutPlans(t *testing.T) {
	_, err := Open(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "no .plans/") {
		t.Fatalf("Open on an empty folder: %v", err)
	}
}

func TestScanSkipsWhatIsNotAPlan(t *testing.T) {
	tr := mkTree(t, "features/a.md: - **Value:** high", "drafts/d.local.md:")
	os.Mkdir(tr.Abs("features/dir.md"), 0o755)
	outside := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(outside, []byte("# secret\n"), 0o644)
	os.Symlink(outside, tr.Abs("features/leak.md"))
	os.Symlink(tr.Abs("drafts/d.local.md"), tr.Abs("bugs/inside.md"))
	os.WriteFile(tr.Abs("features/bin.md"), []byte("# x\x00\x01"), 0o644)
	os.WriteFile(tr.Abs("features/notes.txt"), []byte("x"), 0o644)
	os.Mkdir(tr.Abs("archive"), 0o755)
	os.WriteFile(tr.Abs("archive/old.md"), []byte("# old\n"), 0o644)

	s := scan(t, tr)
	if got := strings.Join(rels(s), " "); got != "drafts/d.local.md bugs/inside.md features/a.md" {
		t.Fatalf("plans %q", got)
	}
	for file, msg := range map[string]string{
		"features/dir.md":  "directory",
		"features/leak.md": "leaving the tree",
		"features/bin.md":  "binary",
	} {
		if !warned(s, file, msg) {
			t.Errorf("no %q warning for %s: %+v", msg, file, s.Warnings)
		}
	}
	if p := s.PlanAt("drafts/d.local.md"); p == nil || p.Slug != "d" || !p.Local {
		t.Errorf("local plan: %+v", p)
	}
}

func TestScanReadsOnlyChangedFiles(t *testing.T) {
	tr := mkTree(t, "features/a.md: - **Value:** low", "features/b.md: - **Value:** low")
	scan(t, tr)
	// Same size and mtime: the cached header stands even though the text differs.
	a := tr.Abs("features/a.md")
	fi, _ := os.Stat(a)
	os.WriteFile(a, []byte(strings.Replace(mustRead(t, a), "low", "hig", 1)), 0o644)
	os.Chtimes(a, fi.ModTime(), fi.ModTime())
	if v := scan(t, tr).PlanAt("features/a.md").Header.Value; v != "low" {
		t.Fatalf("unchanged size+mtime re-read: value %q", v)
	}
	// A real change is seen.
	os.WriteFile(tr.Abs("features/b.md"), []byte("# b\n- **Value:** high\n"), 0o644)
	if v := scan(t, tr).PlanAt("features/b.md").Header.Value; v != "high" {
		t.Fatalf("changed file not re-read: value %q", v)
	}
}

func TestScanLargeAndOddFiles(t *testing.T) {
	tr := mkTree(t)
	big := tr.Abs("features/big.md")
	head := "# Big\r\n- **Value:** high\r\n- **Priority:** P1\r\n"
	os.WriteFile(big, []byte(head+strings.Repeat("x", HeaderLimit)), 0o644)
	// 100 MB, sparse past what is read: the reader must stop at 64 KiB.
	if err := os.Truncate(big, 100<<20); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(tr.Abs("features/latin1.md"), []byte("# caf\xe9\n- **Value:** low\n"), 0o644)
	s := scan(t, tr)
	p := s.PlanAt("features/big.md")
	if p == nil || p.Header.Value != "high" || p.Header.Priority != "P1" || p.Header.Title != "Big" {
		t.Fatalf("big CRLF plan: %+v", p)
	}
	if !warned(s, "features/big.md", "64 KiB") || !warned(s, "features/latin1.md", "UTF-8") {
		t.Fatalf("warnings: %+v", s.Warnings)
	}
	if p := s.PlanAt("features/latin1.md"); p == nil || p.Header.Value != "low" {
		t.Fatalf("invalid UTF-8 plan: %+v", p)
	}
}

func TestCorruptLeaseBlocksAndRecovers(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	os.WriteFile(tr.leasePath("features/a.md"), []byte("{not json"), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(tr.leasePath("features/a.md"), old, old)
	s := scan(t, tr)
	rows := model.Decide(s, model.Worker{AgentID: "w", Tier: model.Mid}, model.Options{Now: tr.now()})
	if rows[0].Eligible || !strings.Contains(rows[0].Reason, "lease unreadable") {
		t.Fatalf("corrupt lease did not block: %+v", rows[0])
	}
	if _, err := tr.Claim("features/a.md", "w", 60); !errors.Is(err, ErrClaimed) || !strings.Contains(err.Error(), "recover") {
		t.Fatalf("claim over a corrupt lease: %v", err)
	}
	if notes := tr.Repair(s); len(notes.Fixed) != 0 {
		t.Fatalf("repair touched a corrupt lease on a present plan: %v", notes)
	}
	if _, err := tr.Recover("features/a.md", Actor{AgentID: "op"}, 60); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Claim("features/a.md", "w", 60); err != nil {
		t.Fatalf("claim after recover: %v", err)
	}
}

func TestClaimNeverOverwrites(t *testing.T) {
	tr := mkTree(t, "features/x.md: - **Value:** high", "in-progress/x.md: - **Value:** low")
	_, err := tr.Claim("features/x.md", "w", 60)
	if !errors.Is(err, ErrDestExists) {
		t.Fatalf("claim onto an existing in-progress file: %v", err)
	}
	if !strings.Contains(mustRead(t, tr.Abs("in-progress/x.md")), "low") || !strings.Contains(mustRead(t, tr.Abs("features/x.md")), "high") {
		t.Fatal("a file was overwritten")
	}
	if l := tr.ReadLease("features/x.md"); l != nil {
		t.Fatalf("failed claim left a ready-path lease: %+v", l)
	}
	if err := moveNoReplace(tr.Abs("features/x.md"), tr.Abs("in-progress/x.md")); !errors.Is(err, os.ErrExist) {
		t.Fatalf("moveNoReplace onto a file: %v", err)
	}
}

func TestClaimTakesOverExpiredReadyLease(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	stale := model.Lease{Plan: "features/a.md", AgentID: "gone", ClaimedAt: 1, ExpiresAt: 2}
	os.MkdirAll(filepath.Dir(tr.leasePath("features/a.md")), 0o755)
	os.WriteFile(tr.leasePath("features/a.md"), model.EncodeLease(stale), 0o644)
	dst, err := tr.Claim("features/a.md", "w", 60)
	if err != nil || dst != "in-progress/a.md" {
		t.Fatalf("claim over an expired lease: %q %v", dst, err)
	}
	if l := tr.ReadLease(dst); l == nil || l.AgentID != "w" || l.Origin != "features/a.md" {
		t.Fatalf("lease %+v", l)
	}
}

func TestReleaseReturnsToOriginAndRespectsOwner(t *testing.T) {
	tr := mkTree(t, "bugs/b.md:")
	dst, err := tr.Claim("bugs/b.md", "w1", 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Release(dst, Actor{AgentID: "w2"}); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("release by another agent: %v", err)
	}
	if _, err := tr.Renew(dst, Actor{AgentID: "w2"}, 60); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("renew by another agent: %v", err)
	}
	back, err := tr.Release(dst, Actor{AgentID: "w1"})
	if err != nil || back != "bugs/b.md" {
		t.Fatalf("release: %q %v", back, err)
	}
	if tr.ReadLease(dst) != nil {
		t.Fatal("lease left after release")
	}
	events, _ := tr.Events()
	if len(events) != 2 || events[0].Event != "claim" || events[1].Event != "release" || events[1].To != "bugs/b.md" {
		t.Fatalf("events %+v", events)
	}
}

func TestParkedPlanReturnsToItsLane(t *testing.T) {
	tr := mkTree(t, "bugs/direct.md:", "bugs/claimed.md:")
	if _, err := tr.Park("bugs/direct.md", model.Blocked, Actor{AgentID: "w"}.Because("needs keys")); err != nil {
		t.Fatal(err)
	}
	ip, _ := tr.Claim("bugs/claimed.md", "w", 60)
	if _, err := tr.Park(ip, model.Ambiguous, Actor{AgentID: "w"}.Because("")); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"blocked/direct.md": "bugs/direct.md", "ambiguous/claimed.md": "bugs/claimed.md"} {
		got, err := tr.Return(rel, "", Actor{AgentID: "op"})
		if err != nil || got != want {
			t.Errorf("return %s: %q %v, want %s", rel, got, err, want)
		}
	}
}

func TestRecoverOnlyStaleLeases(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	ip, _ := tr.Claim("features/a.md", "w1", 60)
	if _, err := tr.Recover(ip, Actor{AgentID: "w2"}, 60); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("recover of a live lease: %v", err)
	}
	tr.Now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	l, err := tr.Recover(ip, Actor{AgentID: "w2"}, 60)
	if err != nil || l.AgentID != "w2" || l.Origin != "features/a.md" {
		t.Fatalf("recover of an expired lease: %+v %v", l, err)
	}
}

func TestRepairLeavesLiveClaimsAlone(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	// A ready-path lease held by a live process (this one), just made.
	live := tr.newLease("features/a.md", "busy", "", "tok", 60)
	if err := tr.createLeaseExcl("features/a.md", live); err != nil {
		t.Fatal(err)
	}
	if notes := tr.Repair(scan(t, tr)); len(notes.Fixed) != 0 {
		t.Fatalf("repair touched a live claim: %v", notes)
	}
	if tr.ReadLease("features/a.md") == nil {
		t.Fatal("live lease removed")
	}
	// The same lease, a minute past the grace, counts as abandoned.
	tr.Now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	if notes := tr.Repair(scan(t, tr)); len(notes.Fixed) != 1 || tr.ReadLease("features/a.md") != nil {
		t.Fatalf("abandoned lease kept: %v", notes)
	}
}

func TestResolvePath(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "o.md"), []byte("# o"), 0o644)
	os.Symlink(filepath.Join(outside, "o.md"), tr.Abs("features/link.md"))
	for _, c := range []struct{ in, want, err string }{
		{in: "features/a.md", want: "features/a.md"},
		{in: ".plans/features/a.md", want: "features/a.md"},
		{in: tr.Abs("features/a.md"), want: "features/a.md"},
		{in: filepath.Join(outside, "o.md"), err: "outside"},
		{in: "features/link.md", err: "outside"},
		{in: "features/none.md", err: "not found"},
		{in: "README.md", err: "not a plan path"},
	} {
		got, err := tr.ResolvePath(c.in, tr.Project)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: got %q, %v; want error %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %s", c.in, got, err, c.want)
		}
	}
}

// TestHistoryRunsGitOnce: git evidence costs one `git log` however many
// slugs are asked about, and only completed/ paths count.
func TestHistoryRunsGitOnce(t *testing.T) {
	tr := mkTree(t, "completed/old.md:", "features/fix-login.md:")
	gitIn := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-C", tr.Project}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitIn("init", "-q")
	gitIn("add", "-A")
	gitIn("commit", "-q", "-m", "plans")
	gitIn("rm", "-q", ".plans/completed/old.md", ".plans/features/fix-login.md")
	gitIn("commit", "-q", "-m", "gone")

	h := tr.History()
	n := testkit.GitRuns(t, func() {
		for slug, want := range map[string]bool{"old": true, "OLD": true, "fix-login": false, "login": false, "never": false} {
			if got := h(slug); got != want {
				t.Errorf("history(%q) = %v, want %v", slug, got, want)
			}
		}
	})
	if n != 1 {
		t.Fatalf("git ran %d times, want once", n)
	}
	if outside := mkTree(t).History(); outside("old") {
		t.Fatal("outside git, nothing was ever completed")
	}
}

func mustRead(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
