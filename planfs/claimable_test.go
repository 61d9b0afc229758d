package planfs

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// leaseFiles lists .leases/ without the lock file.
func leaseFiles(t *testing.T, tr *Tree) []string {
	t.Helper()
	entries, _ := os.ReadDir(tr.Abs(".leases"))
	var out []string
	for _, e := range entries {
		if e.Name() != lockFile {
			out = append(out, e.Name())
		}
	}
	return out
}

func failLeaseOf(t *testing.T, prefix string) {
	leaseFault = func(plan string) error {
		if strings.HasPrefix(plan, prefix) {
			return syscall.ENOSPC
		}
		return nil
	}
	t.Cleanup(func() { leaseFault = nil })
}

// A claim whose in-progress lease cannot be written (a full disk) is undone
// at once: the plan is back where it was, and no lease or temp file of the
// claimer is left.
func TestClaimUndoneWhenItsLeaseCannotBeWritten(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	failLeaseOf(t, "in-progress/")
	dst, err := tr.Claim("features/a.md", "w1", 60)
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), "features/a.md: claim undone") {
		t.Fatalf("claim: %q %v", dst, err)
	}
	if dst != "" || !tr.exists("features/a.md") || tr.exists("in-progress/a.md") {
		t.Fatalf("the plan should be back in features/: dst %q", dst)
	}
	if files := leaseFiles(t, tr); len(files) != 0 {
		t.Fatalf("left behind in .leases: %v", files)
	}
	leaseFault = nil
	if _, err := tr.Claim("features/a.md", "w2", 60); err != nil {
		t.Fatalf("claimable again at once: %v", err)
	}
}

// The ready-path lease appears whole or not at all: a write that fails
// leaves no lease (an empty one would hold the plan for a minute).
func TestReadyLeaseWholeOrNotAtAll(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	failLeaseOf(t, "features/")
	if _, err := tr.Claim("features/a.md", "w1", 60); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("claim with a failing ready-path lease write: %v", err)
	}
	if files := leaseFiles(t, tr); len(files) != 0 || !tr.exists("features/a.md") {
		t.Fatalf("left behind in .leases: %v", files)
	}
}

// An empty lease may be anchor's claim or heartbeat in flight: it follows the
// 60 s leftover rule everywhere, even when its plan is not there (yet).
func TestRepairKeepsYoungEmptyLease(t *testing.T) {
	tr := mkTree(t, "features/b.md:")
	os.MkdirAll(tr.Abs(".leases"), 0o755)
	p := tr.leasePath("in-progress/a.md")
	os.WriteFile(p, nil, 0o644)
	young := time.Now().Add(-30 * time.Second)
	os.Chtimes(p, young, young)
	if got := tr.Repair(scan(t, tr)); len(got.Fixed) != 0 || tr.ReadLease("in-progress/a.md") == nil {
		t.Fatalf("a 30 s old empty lease was removed: %+v", got)
	}
	for _, w := range tr.Check(scan(t, tr)) {
		if strings.Contains(w.File, "in-progress__a.md") {
			t.Errorf("check reports a young empty lease: %+v", w)
		}
	}
	old := time.Now().Add(-2 * time.Minute)
	os.Chtimes(p, old, old)
	if got := tr.Repair(scan(t, tr)); len(got.Fixed) != 1 || tr.ReadLease("in-progress/a.md") != nil {
		t.Fatalf("an old empty lease of a missing plan should go: %+v", got)
	}
}

// A name too long for its in-progress lease file is refused before anything
// moves; 237 bytes, the longest that fits, claims fine.
func TestClaimRefusesNameTooLongForItsLease(t *testing.T) {
	long := strings.Repeat("l", 240-3) + ".md"
	fits := strings.Repeat("f", 237-3) + ".md"
	tr := mkTree(t, "features/"+long+":", "features/"+fits+":")
	_, err := tr.Claim("features/"+long, "w1", 60)
	if !errors.Is(err, ErrUnclaimable) || !strings.Contains(err.Error(), "over 237") {
		t.Fatalf("claim of a 240-byte name: %v", err)
	}
	if !tr.exists("features/"+long) || len(leaseFiles(t, tr)) != 0 {
		t.Fatalf("a refused claim must leave nothing: %v", leaseFiles(t, tr))
	}
	dst, err := tr.Claim("features/"+fits, "w1", 60)
	if err != nil || tr.ReadLease(dst) == nil {
		t.Fatalf("claim of a 237-byte name: %v", err)
	}
	// A bare pick skips the long one and takes nothing else by mistake.
	snap := scan(t, tr)
	if rel, err := tr.ClaimNext(snap, model.Worker{AgentID: "w2", Tier: model.Mid}, model.Options{Now: tr.NowSeconds()}, 60, map[string]bool{}); rel.Rel != "" || err != nil {
		t.Fatalf("ClaimNext took %q: %v", rel, err)
	}
	var seen bool
	for _, w := range tr.Check(snap) {
		seen = seen || w.File == "features/"+long && strings.Contains(w.Message, "no claim can take it")
	}
	if !seen {
		t.Errorf("check does not report the long name: %v", tr.Check(snap))
	}
}

// A lease that cannot expire in time (a week and more ahead, or claimed in
// the future) is reported by check and can be recovered.
func TestImplausibleLeaseIsReportedAndRecoverable(t *testing.T) {
	for name, shift := range map[string][2]float64{"far expiry": {0, 30 * 86400}, "future claim": {3600, 7200}} {
		t.Run(name, func(t *testing.T) {
			tr := mkTree(t, "in-progress/a.md:", "features/x.lock.md:")
			now := tr.NowSeconds()
			l := model.Lease{Plan: "in-progress/a.md", AgentID: "skewed", ClaimedAt: now + shift[0], ExpiresAt: now + shift[1]}
			if err := tr.writeLease("in-progress/a.md", l); err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for _, w := range tr.Check(scan(t, tr)) {
				msgs = append(msgs, w.File+": "+w.Message)
			}
			all := strings.Join(msgs, "\n")
			if !strings.Contains(all, ".leases/in-progress__a.md.json: lease held by skewed cannot be trusted to expire") {
				t.Errorf("check:\n%s", all)
			}
			if !strings.Contains(all, "features/x.lock.md: workers that make its branch") {
				t.Errorf("check does not report the x.lock branch:\n%s", all)
			}
			got, err := tr.Recover("in-progress/a.md", Actor{AgentID: "op"}, 60)
			if err != nil || got == nil || got.AgentID != "op" {
				t.Fatalf("recover: %+v %v", got, err)
			}
		})
	}
}
