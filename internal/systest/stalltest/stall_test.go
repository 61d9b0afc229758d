package stalltest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

func hostile(t *testing.T) string { return fwtest.Program(t, "./testdata/hostile") }

// grace is the drivers' --stop-grace here.
const grace = 2 * time.Second

// driver is one `work-once --run` running in the background.
type driver struct {
	cmd  *exec.Cmd
	out  *bytes.Buffer
	mu   *sync.Mutex
	done chan struct{}
	code int
}

// startDriver starts agent's `work-once --run` in dir.
func startDriver(t *testing.T, dir, agent string, extra ...string) *driver {
	t.Helper()
	args := append([]string{"work-once", "--root", dir, "--run", "--agent-id", agent, "--lease-ttl", "3", "--stop-grace", grace.String()}, extra...)
	d := &driver{cmd: fwtest.Cmd(dir, nil, args...), out: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan struct{})}
	w := lockedWriter{d.mu, d.out}
	d.cmd.Stdout, d.cmd.Stderr = w, w
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		d.cmd.Wait()
		d.code = d.cmd.ProcessState.ExitCode()
		close(d.done)
	}()
	t.Cleanup(func() {
		d.cmd.Process.Kill()
		<-d.done
	})
	return d
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (d *driver) output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

// exited reports whether the driver ended within limit.
func (d *driver) exited(limit time.Duration) bool {
	select {
	case <-d.done:
		return true
	case <-time.After(limit):
		return false
	}
}

// trapSet waits for the agent to say its trap is set, in its worker log.
func trapSet(t *testing.T, dir, agent string) {
	t.Helper()
	fwtest.WaitFor(t, "the hostile agent's trap", 20*time.Second, func() bool {
		log, _ := os.ReadFile(look.LogPath(dir, agent))
		return strings.Contains(string(log), "trap set")
	})
}

// A plan turn whose $FLEET_PROPOSAL is a FIFO: the driver refuses it at
// once instead of waiting in open(2) for a writer, and gives the plan
// back saying why; nothing is left in-progress. (Before: the driver hung
// for good, SIGTERM or not.)
func TestFIFOProposalDoesNotHangTheDriver(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md", Fields: "Plan first: yes"})
	fwtest.WithExecutor(t, dir, hostile(t), "fifo-proposal")
	d := startDriver(t, dir, "w1")
	trapSet(t, dir, "w1")
	if !d.exited(15 * time.Second) {
		log, _ := os.ReadFile(look.LogPath(dir, "w1"))
		d.cmd.Process.Signal(syscall.SIGTERM)
		if !d.exited(grace + 3*time.Second) {
			t.Fatalf("the driver hangs on a FIFO proposal and SIGTERM does not stop it; log:\n%s", log)
		}
		t.Fatalf("the driver hung on a FIFO proposal until SIGTERM; log:\n%s", log)
	}
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	if d.code != fwtest.ExitError || !strings.Contains(string(log), "is not a regular file") {
		t.Errorf("exit %d, want %d and the proposal refused as no regular file; output:\n%s\nlog:\n%s", d.code, fwtest.ExitError, d.output(), log)
	}
	if fwtest.Exists(dir, "in-progress/a.md") || !fwtest.Exists(dir, "features/a.md") {
		t.Errorf("the plan was not given back to features/; output:\n%s", d.output())
	}
}

// A driver told to stop while such an agent runs stops within its grace
// and gives the plan back.
func TestDriverStopsWithinGraceBesideAFIFOProposal(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md", Fields: "Plan first: yes"})
	fwtest.WithExecutor(t, dir, hostile(t), "fifo-proposal-stay")
	d := startDriver(t, dir, "w1")
	trapSet(t, dir, "w1")
	d.cmd.Process.Signal(syscall.SIGTERM)
	if !d.exited(grace + 3*time.Second) {
		log, _ := os.ReadFile(look.LogPath(dir, "w1"))
		t.Fatalf("the driver did not stop within its grace; log:\n%s", log)
	}
	if fwtest.Exists(dir, "in-progress/a.md") || !fwtest.Exists(dir, "features/a.md") {
		t.Errorf("the plan was not given back to features/; output:\n%s", d.output())
	}
}

// $FLEET_USAGE made a FIFO: the driver weighs the run at each heartbeat
// and at its end without waiting on it, says the file is not read, and the
// build goes on to review.
func TestFIFOUsageFileDoesNotHangTheDriver(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	fwtest.WithExecutor(t, dir, hostile(t), "fifo-usage")
	d := startDriver(t, dir, "w1")
	trapSet(t, dir, "w1")
	if !d.exited(15 * time.Second) {
		log, _ := os.ReadFile(look.LogPath(dir, "w1"))
		t.Fatalf("the driver hangs on a FIFO usage file; log:\n%s", log)
	}
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	if d.code != 0 || !fwtest.Exists(dir, "review-needed/a.md") {
		t.Errorf("exit %d; output:\n%s\nlog:\n%s", d.code, d.output(), log)
	}
	if !strings.Contains(string(log), "usage.jsonl is not a regular file") {
		t.Errorf("the log does not say the usage file was refused:\n%s", log)
	}
}

// A peer reviewer whose $FLEET_REVIEW is a FIFO: the review is refused
// at once, naming the file, instead of waiting in open(2) for a writer.
// (Before: `review --peer` hung for good.)
func TestFIFOReviewFileDoesNotHangTheReview(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	dir := landkit.LandProject(t, "")
	landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	landkit.Write(t, dir, "endpoints.yaml", fmt.Sprintf("endpoints:\n  - name: mid\n    tier: mid\n    model: fake-1\n    command: [%q, fifo-review]\n", hostile(t)))
	cmd := fwtest.Cmd(dir, nil, "review", "x", "--peer")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("review --peer hangs on a FIFO verdict file:\n%s", out.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != fwtest.ExitError || !strings.Contains(out.String(), "review.md is not a regular file") {
		t.Errorf("exit %d, want %d naming the verdict file:\n%s", code, fwtest.ExitError, out.String())
	}
	if fwtest.Exists(dir, "reviews/x") {
		t.Error("a review was stored")
	}
}

// runs are the ledger's records.
func runs(t *testing.T, dir string) []ledger.Run {
	t.Helper()
	var out []ledger.Run
	if _, err := ledger.Read(dir, time.Time{}, func(r ledger.Run) { out = append(out, r) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// An agent reporting cost_usd 1e308 and 1e18 tokens in and out counts for at most budgets: reported_max's defaults, 10M tokens and
// $100, against its run and its plan; its report never spends the fleet's
// daily budget, so a second worker still starts its run. From an endpoint
// the driver meters, the report counts against no daily budget at all;
// from one it cannot, the bounded figure does. (Before: the fleet's day
// was spent and every worker idle.)
func TestHugeUsageReportCannotStopTheFleet(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not called in this test", http.StatusTeapot)
	}))
	t.Cleanup(upstream.Close)
	for _, c := range []struct {
		name, baseURL, fleetDay string
		wantDay                 float64
	}{
		{"metered endpoint", upstream.URL + "/v1", "50", 0},
		{"unmetered endpoint", "", "250", 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"}, fwtest.Plan{Rel: "features/b.md"})
			var b strings.Builder
			b.WriteString("endpoints:\n  - name: local\n    tier: mid\n    model: fake-1\n")
			if c.baseURL != "" {
				fmt.Fprintf(&b, "    base_url: %q\n", c.baseURL)
			}
			fmt.Fprintf(&b, "    command: [%q, report-huge]\n", hostile(t))
			os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(b.String()), 0o644)
			os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("budgets:\n  fleet_day: {usd: "+c.fleetDay+"}\n  plan: {usd: 120}\n"), 0o644)

			first := fwtest.Run(t, dir, "work-once", "--root", dir, "--run", "--endpoint", "local", "--agent-id", "w1", "--slug", "a")
			if first.Code != 0 {
				t.Fatalf("first run: %v", first)
			}
			rs := runs(t, dir)
			if len(rs) != 1 {
				t.Fatalf("ledger: %+v", rs)
			}
			r := rs[0]
			if r.Source != ledger.Reported || r.CostUSD != 100 || r.Tokens() != 10_000_000 || r.NotDaily != (c.baseURL != "") {
				t.Errorf("the report was not bounded to 10M tokens and $100: %+v", r)
			}
			day, err := ledger.ReadToday(dir, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if day.FleetDay.USD != c.wantDay {
				t.Errorf("the fleet's day counts $%v, want $%v", day.FleetDay.USD, c.wantDay)
			}
			show := fwtest.Run(t, dir, "budget", "show", "--root", dir)
			if !strings.Contains(show.Stdout, "plan a") || !strings.Contains(show.Stdout, "10M tokens, $100.00") {
				t.Errorf("the plan's budget does not count the bounded report:\n%s", show)
			}

			second := fwtest.Run(t, dir, "work-once", "--root", dir, "--run", "--endpoint", "local", "--agent-id", "w2", "--slug", "b")
			if second.Code != 0 || !fwtest.Exists(dir, "review-needed/b.md") {
				t.Fatalf("a second worker did not run after the report: %v", second)
			}
		})
	}
}
