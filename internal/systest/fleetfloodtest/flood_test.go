//go:build !etcd

package fleetfloodtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

const workerRefs = "refs/fleetwatch/workers/"

// TestFloodHidesNoWorker: 3,000 junk worker refs under host aaa (2,000
// readable records, 1,000 copies of one under other names) and 2,100
// unreadable ones under hosts ab0000…, all sorting before host-b, where a
// genuine worker runs: host-c's watch status still lists it live, shows
// 256 of aaa's, and `worker stop wb --host host-b` stops it.
func TestFloodHidesNoWorker(t *testing.T) {
	t.Parallel()
	f := remotetest.NewFleet(t, remotetest.Plans(1)...)
	b, c := f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, b)
	start := time.Now()
	var in bytes.Buffer
	for i := range 2000 {
		rec := record(t, "aaa", fmt.Sprintf("j%04d", i), 60, 180)
		fmt.Fprintf(&in, "reset refs/heads/junk\ncommit refs/heads/junk\nmark :%d\ncommitter junk <junk@localhost> 1700000000 +0000\ndata 4\njunk\nM 100644 inline worker.json\ndata %d\n%s\n",
			i+1, len(rec), rec)
	}
	refs := map[string]int{}
	for i := range 2000 {
		refs[fmt.Sprintf("aaa/j%04d", i)] = i + 1
	}
	for i := range 1000 {
		refs[fmt.Sprintf("aaa/u%04d", i)] = 1
	}
	for i := range 2100 {
		refs[fmt.Sprintf("ab%04d/x", i)] = 1
	}
	flood(t, f.Bare, in.Bytes(), refs)
	t.Logf("%d junk refs written in %v", len(refs), time.Since(start).Round(time.Millisecond))

	fwtest.WithExecutor(t, b, fwtest.FakeAgent(t), "-sleep", "2m", "-lines", "1000", "-every", "200ms")
	wb, outB := remotetest.Worker(t, b, "host-b", "wb")
	fwtest.WaitFor(t, "wb's record on the remote", 30*time.Second, func() bool {
		out, _ := exec.Command("git", "-C", f.Bare, "for-each-ref", workerRefs+"host-b/wb").Output()
		return len(out) > 0
	})
	rows := remotetest.Status(t, c, "host-c")
	if row := rows["wb on host-b"]; !strings.HasPrefix(row, "live") {
		t.Errorf("host-c's watch status shows wb on host-b as %q, not live (%d fleet rows)", row, len(rows))
	}
	aaa := 0
	for name := range rows {
		if strings.HasSuffix(name, " on aaa") {
			aaa++
		}
	}
	if aaa != 256 {
		t.Errorf("watch status shows %d of aaa's 3,000 records, want 256 (its readable ones first)", aaa)
	}
	r := fwtest.RunEnv(t, c, []string{"FLEET_HOST=host-c"}, "worker", "stop", "wb", "--host", "host-b", "--root", c)
	if r.Code != 0 || !strings.Contains(r.Stdout, "asked to stop on host-b") {
		t.Fatalf("worker stop wb --host host-b from host-c: %v", r.String())
	}
	done := make(chan error, 1)
	go func() { done <- wb.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("wb did not stop at a heartbeat:\n%s", outB.String())
	}
}

// flood writes the commits of a fast-import stream into the bare remote
// and points each worker ref named in refs at its commit (by mark), in
// packed-refs: as a clone with push access could push them, without
// thousands of loose refs made one at a time.
func flood(t *testing.T, bare string, stream []byte, refs map[string]int) {
	marks := filepath.Join(t.TempDir(), "marks")
	git(t, bare, stream, "fast-import", "--quiet", "--export-marks="+marks)
	git(t, bare, nil, "update-ref", "-d", "refs/heads/junk")
	data, err := os.ReadFile(marks)
	if err != nil {
		t.Fatal(err)
	}
	oid := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var mark int
		var id string
		if _, err := fmt.Sscanf(line, ":%d %s", &mark, &id); err != nil {
			t.Fatalf("%s: %q: %v", marks, line, err)
		}
		oid[mark] = id
	}
	packed := filepath.Join(bare, "packed-refs")
	old, err := os.ReadFile(packed)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(string(old), "\n") {
		if !strings.HasPrefix(line, "# pack-refs") { // unsorted now: git sorts what it reads
			out.WriteString(line)
		}
	}
	for name, mark := range refs {
		fmt.Fprintf(&out, "%s %s%s\n", oid[mark], workerRefs, name)
	}
	if err := os.WriteFile(packed, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOwnPaceIsBounded: a record claiming a heartbeat and a TTL of 1e7 s
// (115 days), seen unchanged for four hours (more than 10× the reader's
// own 15-minute TTL), reads dead on host-c, not live.
func TestOwnPaceIsBounded(t *testing.T) {
	t.Parallel()
	f := remotetest.NewFleet(t, remotetest.Plans(1)...)
	c, forger := f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, c)
	rec := record(t, "host-d", "wd", 1e7, 1e7)
	in := fmt.Sprintf("commit %shost-d/wd\ncommitter forger <f@localhost> 1700000000 +0000\ndata 4\nslow\nM 100644 inline worker.json\ndata %d\n%s\n", workerRefs, len(rec), rec)
	git(t, forger, []byte(in), "fast-import", "--quiet")
	git(t, forger, nil, "push", "--quiet", "origin", workerRefs+"*:"+workerRefs+"*")
	if row := remotetest.Status(t, c, "host-c")["wd on host-d"]; !strings.HasPrefix(row, "live") {
		t.Fatalf("wd, first seen now, reads %q, not live", row)
	}
	age(t, c, 4*time.Hour)
	if row := remotetest.Status(t, c, "host-c")["wd on host-d"]; !strings.HasPrefix(row, "dead") {
		t.Errorf("wd, unchanged for 4 h on host-c's clock, reads %q, not dead", row)
	}
}

// record is a running worker's worker.json claiming heartbeat every and
// ttl seconds, its heartbeat now.
func record(t *testing.T, host, agent string, every, ttl float64) []byte {
	data, err := json.Marshal(map[string]any{"agent_id": agent, "host": host, "state": "running", "run": "r-" + agent,
		"heartbeat": float64(time.Now().Unix()), "heartbeat_every": every, "ttl": ttl, "plan": "features/p001.md"})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// age moves back by d every entry of dir's worker clock (each record's
// first sighting, on the boot clock), as if this machine had seen them
// unchanged d longer.
func age(t *testing.T, dir string, d time.Duration) {
	files, _ := filepath.Glob(filepath.Join(dir, "var", "fleet", "claims", "seen-workers-*.json"))
	if len(files) != 1 {
		t.Fatalf("want one worker clock under %s, have %v", dir, files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var seen struct {
		BootID string `json:"boot_id"`
		Leases map[string]struct {
			Oid   string  `json:"oid"`
			Since float64 `json:"since"`
		} `json:"leases"`
	}
	if err := json.Unmarshal(data, &seen); err != nil || len(seen.Leases) == 0 {
		t.Fatalf("%s: %v %s", files[0], err, data)
	}
	for k, e := range seen.Leases {
		e.Since -= d.Seconds()
		seen.Leases[k] = e
	}
	if data, err = json.Marshal(seen); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// git runs git in dir with stdin.
func git(t *testing.T, dir string, stdin []byte, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args[0], dir, err, out)
	}
}
