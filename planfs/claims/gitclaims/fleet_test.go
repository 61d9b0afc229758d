package gitclaims

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/refname"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

func record(host, agent, run string) claims.WorkerRecord {
	now := float64(time.Now().UnixNano()) / 1e9
	return claims.WorkerRecord{AgentID: agent, Host: host, Tier: "mid", Plan: "features/p000.md", State: claims.WorkerRunning,
		Run: run, Started: now, Heartbeat: now, HeartbeatEvery: 0.2, TTL: 1, Note: "running fake"}
}

func TestWorkerRefsAreSafeAndDistinct(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, n := range [][2]string{{"gpu-box.lan", "w 1"}, {"gpu-box_lan", "w_1"}, {"a/b", "c"}, {"a", "b/c"}, {"..", ".lock"}, {"", "x"}} {
		ref := WorkerRef(n[0], n[1])
		if p := refname.Problem(ref); p != "" {
			t.Errorf("%q: %s", ref, p)
		}
		if prev, dup := seen[ref]; dup {
			t.Errorf("%q and %q share %s", prev, n, ref)
		}
		seen[ref] = fmt.Sprint(n)
		host, agent, ok := NamesOf(strings.TrimPrefix(ref, WorkerRefs))
		if n[0] != "" && (!ok || host != n[0] || agent != n[1]) {
			t.Errorf("%s reads back as %q %q %v", ref, host, agent, ok)
		}
	}
	for _, name := range []string{"%41/b", "a/%62", "a%2e/b", "a/b/c", "a", "%zz/b"} {
		if host, agent, ok := NamesOf(name); ok {
			t.Errorf("NamesOf(%q) = %q %q: a spelling fleetwatch never writes", name, host, agent)
		}
	}
}

// TestFleetAcrossClones: three clones of one remote stand for machines;
// each publishes workers, a fourth reads them all with their hosts, one
// that stops publishing goes stale then dead on the reader's clock, and a
// stop request from one machine reaches another's next publish.
func TestFleetAcrossClones(t *testing.T) {
	// Not parallel: each look must come within its worker's 2.6 s stale
	// window, which the other tests' git processes could make it miss.
	url := remoteWith(t, readyPlans(2))
	ctx := context.Background()
	var pubs []*Backend
	for h := range 3 {
		b, _ := cloneOf(t, url)
		pubs = append(pubs, b)
		for a := range 2 {
			rec := record(fmt.Sprintf("host-%d", h), fmt.Sprintf("w%d", a), "run1")
			rec.TTL = 3 // stale from 0.4 s to 3 s: a reader under load still sees it
			if in, err := b.Publish(ctx, rec); err != nil || in.Stop != nil {
				t.Fatalf("publish: %v %v", in.Stop, err)
			}
		}
	}
	reader, _ := cloneOf(t, url)
	all, err := reader.Workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6 {
		t.Fatalf("read %d workers, want 6: %+v", len(all), all)
	}
	for i, p := range all {
		if want := fmt.Sprintf("host-%d", i/2); p.Host != want || p.Health != claims.HealthLive || p.Problem != "" {
			t.Errorf("worker %d: %s on %s %s %q", i, p.AgentID, p.Host, p.Health, p.Problem)
		}
	}
	// A second publish by the same process is a compare-and-swap on its own.
	if _, err := pubs[0].Publish(ctx, record("host-0", "w0", "run1")); err != nil {
		t.Fatal(err)
	}
	// host-1 asks host-2's w1 to stop; w1's next publish hears of it.
	if err := pubs[1].RequestStop(ctx, "host-2", "w1", claims.StopRequest{By: "op", Host: "host-1"}); err != nil {
		t.Fatal(err)
	}
	heard := record("host-2", "w1", "run1")
	heard.Note = "stopping"
	in, err := pubs[2].Publish(ctx, heard)
	stop := in.Stop
	if err != nil || stop == nil || stop.By != "op" || stop.Host != "host-1" {
		t.Fatalf("publish after a stop request: %+v %v", stop, err)
	}
	// The record that heard it landed all the same, over the request.
	if all, err := reader.Workers(ctx); err != nil || all[5].Note != "stopping" || all[5].Stop != nil {
		t.Fatalf("after the publish that heard the stop the remote holds %+v (%v)", all[5], err)
	}
	// Its final record goes over the request.
	done := record("host-2", "w1", "run1")
	done.State = claims.WorkerExited
	if in, err := pubs[2].Publish(ctx, done); err != nil || in.Stop != nil {
		t.Fatalf("final publish: %v %v", in.Stop, err)
	}
	if err := pubs[1].RequestStop(ctx, "host-2", "w1", claims.StopRequest{By: "op"}); !errors.Is(err, claims.ErrWorkerDone) {
		t.Fatalf("stop of an exited worker: %v", err)
	}
	if err := pubs[1].RequestStop(ctx, "host-9", "w1", claims.StopRequest{By: "op"}); !errors.Is(err, claims.ErrNoWorker) {
		t.Fatalf("stop of no worker: %v", err)
	}
	// One worker read by its own ref, judged by the reader's clock.
	if p, err := reader.Worker(ctx, "host-2", "w1"); err != nil || p.Health != claims.HealthExited || p.Version == "" {
		t.Fatalf("Worker(host-2, w1) = %+v, %v", p, err)
	}
	if _, err := reader.Worker(ctx, "host-9", "w1"); !errors.Is(err, claims.ErrNoWorker) {
		t.Fatalf("Worker of no worker: %v", err)
	}
	// host-0's w0 keeps publishing; the others fall silent.
	health := func() map[string]string {
		all, err := reader.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, p := range all {
			out[p.Host+"/"+p.AgentID] = p.Health
		}
		return out
	}
	saw := map[string]bool{}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !saw["dead"]; {
		time.Sleep(100 * time.Millisecond)
		if _, err := pubs[0].Publish(ctx, record("host-0", "w0", "run1")); err != nil {
			t.Fatal(err)
		}
		h := health()
		if h["host-0/w0"] != claims.HealthLive || h["host-2/w1"] != claims.HealthExited {
			t.Fatalf("publishing worker or exited worker misjudged: %v", h)
		}
		saw[h["host-1/w0"]] = true
	}
	if !saw[claims.HealthStale] || !saw[claims.HealthDead] {
		t.Fatalf("a silent worker should go stale then dead on the reader's clock; saw %v", saw)
	}
}

// TestWorkerRecordFromElsewhereIsBounded: a record another machine pushed
// with escape sequences and a huge note reads back safe and short, and
// one under another worker's ref is a problem, not that worker.
func TestWorkerRecordFromElsewhereIsBounded(t *testing.T) {
	t.Parallel()
	url := remoteWith(t, readyPlans(1))
	ctx := context.Background()
	b, _ := cloneOf(t, url)
	rec := record("h", "w", "r")
	rec.Note = "\x1b]0;pwned\x07" + strings.Repeat("x", 5000)
	rec.LastLine = "\x1b[2J" + strings.Repeat("y", 5000)
	if _, err := b.Publish(ctx, rec); err != nil {
		t.Fatal(err)
	}
	liar := record("h", "other", "r")
	oid, err := b.recordCommit(ctx, liar, nil)
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, b.project, "push", "-q", "origin", oid+":"+WorkerRef("h", "w2"))
	reader, _ := cloneOf(t, url)
	all, err := reader.Workers(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("%v %+v", err, all)
	}
	if n := all[0].Note; strings.ContainsRune(n, 0x1b) || len(n) > 300 || len(all[0].LastLine) > 300 {
		t.Fatalf("note not bounded: %d bytes %q…", len(n), n[:20])
	}
	if all[1].Problem == "" || all[1].AgentID != "w2" {
		t.Fatalf("a record under another's ref read as %+v", all[1])
	}
}

// TestPruneDayOldRecords: a driver's first publish deletes the records its
// machine has seen unchanged for a day (here, a seen clock set back),
// readable or not, and leaves the others and its own.
func TestPruneDayOldRecords(t *testing.T) {
	t.Parallel()
	url := remoteWith(t, readyPlans(1))
	ctx := context.Background()
	old, _ := cloneOf(t, url)
	for _, a := range []string{"gone", "fresh"} {
		if _, err := old.Publish(ctx, record("h", a, "r")); err != nil {
			t.Fatal(err)
		}
	}
	liar, err := old.recordCommit(ctx, record("h", "someone-else", "r"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, old.project, "push", "-q", "origin", liar+":"+WorkerRef("h", "bad"))
	// A name fleetwatch never writes ("%41" for "A"): no record's fields
	// make its ref again, so it is pruned by the name read.
	gitIn(t, old.project, "push", "-q", "origin", liar+":"+WorkerRefs+"%41h/odd")
	b, dir := cloneOf(t, url)
	if _, err := b.Workers(ctx); err != nil { // this machine has now seen both
		t.Fatal(err)
	}
	name := "seen-workers-" + safeName(b.remote) + ".json"
	path := filepath.Join(dir, "var", "fleet", "claims", name)
	var seen seenFile
	data, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(data, &seen) != nil {
		t.Fatalf("seen file: %v %s", err, data)
	}
	for _, name := range []string{WorkerName("h", "gone"), WorkerName("h", "bad"), "%41h/odd"} {
		e, ok := seen.Leases[name]
		if !ok {
			t.Fatalf("%s not in the seen file: %s", name, data)
		}
		e.Since -= 2 * claims.Prune.Seconds()
		seen.Leases[name] = e
	}
	data, _ = json.Marshal(seen)
	os.WriteFile(path, data, 0o644)
	if _, err := b.Publish(ctx, record("h2", "me", "r")); err != nil {
		t.Fatal(err)
	}
	all, err := old.Workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range all {
		names = append(names, p.Host+"/"+p.AgentID)
	}
	if strings.Join(names, " ") != "h/fresh h2/me" {
		t.Fatalf("after the prune the remote holds %v, want h/fresh and h2/me", names)
	}
}

// TestFleetChangesHearsAPublish: a reader's FleetChanges says so after a
// worker on another clone publishes, and not while nothing moves; it
// ends with its context.
func TestFleetChangesHearsAPublish(t *testing.T) {
	t.Parallel()
	bare := remoteWith(t, readyPlans(1))
	pub, _ := cloneOf(t, bare)
	reader, _ := cloneOf(t, bare)
	ctx, cancel := context.WithCancel(context.Background())
	changes := reader.FleetChanges(ctx)
	time.Sleep(3 * FleetPoll) // its first listing, of no worker
	select {
	case <-changes:
		t.Fatal("a change said with nothing published")
	default:
	}
	if _, err := pub.Publish(ctx, record("gpu-box", "w1", "run")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-time.After(10 * time.Second):
		t.Fatal("no word of the publish in 10 s")
	}
	cancel()
	for range changes { // closed once ctx ends
	}
}

// TestForgedWorkerRecordsAreProblems: what another machine pushes under
// the worker refs is read only as what its ref says: a copy of a good
// record under another worker's ref, a name in a spelling fleetwatch never
// writes, and a worker.json too large to read are each a problem row, and
// the genuine record beside them stays as it was.
func TestForgedWorkerRecordsAreProblems(t *testing.T) {
	t.Parallel()
	url := remoteWith(t, readyPlans(1))
	ctx := context.Background()
	pub, _ := cloneOf(t, url)
	if _, err := pub.Publish(ctx, record("h", "w0", "r")); err != nil {
		t.Fatal(err)
	}
	reader, _ := cloneOf(t, url)
	if all, err := reader.Workers(ctx); err != nil || len(all) != 1 || all[0].Problem != "" {
		t.Fatalf("first read: %+v %v", all, err)
	}
	good := strings.Fields(gitIn(t, pub.project, "ls-remote", "origin", WorkerRef("h", "w0")))[0]
	gitIn(t, pub.project, "push", "-q", "origin", good+":"+WorkerRef("h", "w9"))
	gitIn(t, pub.project, "push", "-q", "origin", good+":"+WorkerRefs+"h/w%30")

	huge := filepath.Join(t.TempDir(), "worker.json")
	if err := os.WriteFile(huge, []byte(`{"agent_id":"big","host":"h","note":"`+strings.Repeat("x", 8<<20)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	blob := gitIn(t, pub.project, "hash-object", "-w", huge)
	mk := exec.Command("git", "mktree")
	mk.Dir, mk.Stdin = pub.project, strings.NewReader("100644 blob "+blob+"\tworker.json\n")
	out, err := mk.Output()
	if err != nil {
		t.Fatal(err)
	}
	tree := strings.TrimSpace(string(out))
	commit := gitIn(t, pub.project, "commit-tree", tree, "-m", "big")
	gitIn(t, pub.project, "push", "-q", "origin", commit+":"+WorkerRef("h", "big"))

	all, err := reader.Workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]claims.Published{}
	for _, p := range all {
		got[p.Host+"/"+p.AgentID] = p
	}
	if p := got["h/w0"]; p.Problem != "" || p.Plan != "features/p000.md" {
		t.Errorf("the genuine record: %+v", p)
	}
	for key, want := range map[string]string{
		"h/w9":     "names w0 on h",
		"h/w%30/?": "not a name fleetwatch writes",
		"h/big":    "more than 16384; not read",
	} {
		if p, ok := got[key]; !ok || !strings.Contains(p.Problem, want) {
			t.Errorf("%s: %q, want a problem saying %q (read: %v)", key, p.Problem, want, slices.Collect(maps.Keys(got)))
		}
	}
}

// TestStopRequestIsNoHeartbeat: a stop request written into a dead
// worker's record changes its ref but not its heartbeat, so a reader
// still sees it dead.
func TestStopRequestIsNoHeartbeat(t *testing.T) {
	t.Parallel()
	url := remoteWith(t, readyPlans(1))
	ctx := context.Background()
	pub, _ := cloneOf(t, url)
	if _, err := pub.Publish(ctx, record("h", "w0", "r")); err != nil {
		t.Fatal(err)
	}
	reader, _ := cloneOf(t, url)
	health := func() string {
		all, err := reader.Workers(ctx)
		if err != nil || len(all) != 1 {
			t.Fatalf("read: %+v %v", all, err)
		}
		return all[0].Health
	}
	if h := health(); h != claims.HealthLive {
		t.Fatalf("just published: %s", h)
	}
	time.Sleep(1200 * time.Millisecond) // its TTL is 1 s
	if h := health(); h != claims.HealthDead {
		t.Fatalf("silent past its TTL: %s", h)
	}
	if err := reader.RequestStop(ctx, "h", "w0", claims.StopRequest{By: "op"}); err != nil {
		t.Fatal(err)
	}
	if h := health(); h != claims.HealthDead {
		t.Fatalf("after a stop request the dead worker reads %s", h)
	}
}
