package remotetest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// gitIn runs git in dir with stdin and returns its trimmed stdout.
func gitIn(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v in %s: %v", args, dir, err)
	}
	return strings.TrimSpace(string(out))
}

// backdate rewrites slug's lease commit on the remote as a clone whose
// clock runs two minutes fast (or slow) would have written it: every JSON
// file in its tree has claimed_at and expires_at moved back by shift,
// so expires_at is already past. The new commit's parent is the old one.
func (f *Fleet) backdate(t testing.TB, slug string, shift time.Duration) {
	t.Helper()
	ref := LeaseRefs + slug
	old := gitIn(t, f.Bare, nil, "rev-parse", ref)
	var entries []string
	for _, line := range strings.Split(gitIn(t, f.Bare, nil, "ls-tree", old), "\n") {
		meta, name, _ := strings.Cut(line, "\t")
		fields := strings.Fields(meta)
		if len(fields) != 3 || fields[1] != "blob" {
			entries = append(entries, line)
			continue
		}
		data := []byte(gitIn(t, f.Bare, nil, "cat-file", "blob", fields[2]))
		var m map[string]any
		if json.Unmarshal(data, &m) == nil {
			for _, k := range []string{"claimed_at", "expires_at"} {
				if v, ok := m[k].(float64); ok {
					m[k] = v - shift.Seconds()
				}
			}
			data, _ = json.Marshal(m)
		}
		oid := gitIn(t, f.Bare, data, "hash-object", "-w", "--stdin")
		entries = append(entries, fields[0]+" blob "+oid+"\t"+name)
	}
	tree := gitIn(t, f.Bare, []byte(strings.Join(entries, "\n")+"\n"), "mktree")
	commit := gitIn(t, f.Bare, nil, "commit-tree", tree, "-p", old, "-m", "lease from a skewed clock")
	gitIn(t, f.Bare, nil, "update-ref", ref, commit, old)
}

// TestSkewedClockCannotTakeALiveLease: a lease whose expires_at is already
// past, as a clone whose clock is two minutes off writes it, is not taken
// over before this machine has seen it unchanged for TTL plus grace: exit
// 1, saying how long it has seen it of how long it needs.
func TestSkewedClockCannotTakeALiveLease(t *testing.T) {
	t.Parallel()
	f := NewFleet(t, Plans(1)...)
	a, b := f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	NeedBackend(t, a)
	fwtest.Want(t, fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "holder", "--once", "--lease-ttl", "60"), 0)
	f.backdate(t, "p000", 2*time.Minute)
	if h := List(t, b, "obs").Holder("p000"); h != "holder" {
		t.Fatalf("--list: holder %q, want holder", h)
	}
	r := fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "thief", "--recover", "--slug", "p000")
	if r.Code != 1 || !strings.Contains(r.Stderr, "seen unchanged for") || !strings.Contains(r.Stderr, "a takeover needs") {
		t.Fatalf("recover of a backdated live lease: %v", r)
	}
	// Nor does a bare pick take it.
	fwtest.Want(t, fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "thief", "--once"), 1)
	if h := List(t, b, "obs").Holder("p000"); h != "holder" {
		t.Errorf("after the refused takeover: holder %q, want holder", h)
	}
}

// TestLeftoverLockSkipsOnePlan: a .lock left on the remote for one plan's
// lease ref (p000, the first pick) skips that plan with the reason on
// stderr, and the worker claims the next pick (exit 0, never 2); a named
// claim of it is exit 1 naming the lock; check reports it until the lock
// is gone and the plan claimed.
func TestLeftoverLockSkipsOnePlan(t *testing.T) {
	t.Parallel()
	f := NewFleet(t, Plans(3)...)
	a := f.Clone(t, f.Bare)
	NeedBackend(t, a)
	lock := filepath.Join(f.Bare, filepath.FromSlash(LeaseRefs), "p000.lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w", "--once")
	if r.Code != 0 || SlugOf(r.Stdout) == "p000" || !strings.Contains(r.Stderr, "bugs/p000.md: skipped") || !strings.Contains(r.Stderr, "p000.lock") {
		t.Fatalf("a bare claim behind one leftover lock: %v", r)
	}
	r = fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w", "--slug", "p000")
	if r.Code != 1 || !strings.Contains(r.Stderr, "p000.lock") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Errorf("a named claim behind a leftover lock: %v", r)
	}
	if refs := f.Leases(t); refs["p000"] != "" || len(refs) != 1 {
		t.Errorf("lease refs after the skip: %v", refs)
	}
	r = fwtest.Run(t, a, "check", "--root", a)
	if r.Code != 1 || !strings.Contains(r.Stdout, "origin:"+LeaseRefs+"p000: locked on the remote") {
		t.Errorf("check with the lock: %v", r)
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	fwtest.Want(t, fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w", "--slug", "p000"), 0)
	if r := fwtest.Run(t, a, "check", "--root", a); strings.Contains(r.Stdout, "locked") {
		t.Errorf("check once the lock is gone and the plan claimed: %v", r)
	}
}

// TestKilledMidPush kills a claiming work-once with -9 while the remote's
// pre-receive hook holds its push: once the client only (its git push may
// land the claim after it died), once its whole process group. Afterwards
// the remote, --list and the next claim agree on whether the claim landed,
// and the plan is never held twice.
func TestKilledMidPush(t *testing.T) {
	t.Parallel()
	for _, whole := range []bool{false, true} {
		name := "client"
		if whole {
			name = "group"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := NewFleet(t, Plans(1)...)
			a, b := f.Clone(t, f.Bare), f.Clone(t, f.Bare)
			NeedBackend(t, a)
			slow := filepath.Join(t.TempDir(), "slow")
			hook := filepath.Join(f.Bare, "hooks", "pre-receive")
			script := "#!/bin/sh\ncat >/dev/null\nif [ -e " + slow + " ]; then sleep 2; fi\nexit 0\n"
			if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(slow, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := fwtest.Cmd(a, nil, "work-once", "--root", a, "--agent-id", "victim", "--once")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitForPush(t, f.Bare)
			pid := cmd.Process.Pid
			if whole {
				pid = -pid
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
			_ = cmd.Wait()
			os.Remove(slow)
			time.Sleep(3 * time.Second) // whatever lives on finishes its push
			landed := f.Leases(t)["p000"] != ""
			held := List(t, b, "obs").Holder("p000")
			if landed != (held == "victim") {
				t.Fatalf("the remote has the lease: %v; --list says the holder is %q", landed, held)
			}
			r := fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "next", "--once")
			switch {
			case landed && r.Code != 1:
				t.Errorf("the landed claim was claimed again: %v", r)
			case !landed && r.Code != 0:
				t.Errorf("the claim did not land, yet the next run took nothing: %v", r)
			}
			if h := List(t, a, "obs").Holder("p000"); landed && h != "victim" || !landed && h != "next" {
				t.Errorf("landed %v, --list in the victim's clone says %q", landed, h)
			}
		})
	}
}

// waitForPush waits until a push into bare is under way (its
// receive-pack runs, held by the slow hook), at most 20 s.
func waitForPush(t *testing.T, bare string) {
	t.Helper()
	fwtest.WaitFor(t, "the claim's git push", 20*time.Second, func() bool {
		out, _ := exec.Command("ps", "-eo", "args=").Output()
		for _, args := range strings.Split(string(out), "\n") {
			if strings.Contains(args, "receive-pack") && strings.Contains(args, bare) {
				return true
			}
		}
		return false
	})
}
