package anchortest

// Benchmarks for `work-once --list`, run in-process through run() on
// generated git projects of 1k and 10k plans. The target (from the issue):
// within 3× the time of reading the same files' first 4 KiB raw, reported
// as the x-raw metric; git/op counts the git processes one listing starts
// (the contract: one `git log` per scan).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/plangen"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

// Generated projects live for the whole test process, because several
// benchmarks read the same one and writing and committing 10k files takes
// seconds. TestMain removes them.
var benchTrees = plangen.Trees{Pattern: "fleetwatch-main-bench-"}

// benchTree returns the cached n-plan project: a scaffolded git repository
// whose history also holds a few completed plans since deleted, so some
// dependencies are met only by git evidence.
func benchTree(b *testing.B, n int) string {
	b.Helper()
	start := time.Now()
	d, err := benchTrees.Get(n, func(d string) error {
		// Scaffold first: its .gitignore keeps leases and private plans out
		// of the commits, as in a real project.
		if _, err := planfs.Scaffold(d); err != nil {
			return err
		}
		git := func(args ...string) error {
			cmd := exec.Command("git", append([]string{"-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
				"-c", "commit.gpgsign=false", "-C", d}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("git %v: %v\n%s", args, err, out)
			}
			return nil
		}
		if err := git("init", "-q"); err != nil {
			return err
		}
		var retired []string
		for k := 0; k < 50; k += 2 {
			rel := filepath.Join(planfs.Dir, "completed", fmt.Sprintf("retired-plan-%d.md", k))
			retired = append(retired, rel)
			if err := os.WriteFile(filepath.Join(d, rel), []byte("# Retired\n"), 0o644); err != nil {
				return err
			}
		}
		for _, args := range [][]string{
			{"add", "-A"},
			{"commit", "-q", "-m", "plans"},
			append([]string{"rm", "-q"}, retired...),
			{"commit", "-q", "-m", "retire old plans"},
		} {
			if err := git(args...); err != nil {
				return err
			}
		}
		b.Logf("generated and committed %d plans in %v", n, time.Since(start).Round(time.Millisecond))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// benchGitRuns runs args once and returns how many git processes it started.
func benchGitRuns(b *testing.B, args []string) int {
	return testkit.GitRuns(b, func() {
		if code := cli.Main(args, io.Discard, io.Discard); code != fwtest.ExitOK {
			b.Fatalf("%v: exit %d", args, code)
		}
	})
}

// benchWorkOnceList measures `fleetwatch work-once --list` (plus extra
// flags) on the cached n-plan project, after checking its output once.
func benchWorkOnceList(b *testing.B, n int, extra ...string) {
	dir := benchTree(b, n)
	args := append([]string{"work-once", "--root", dir, "--list", "--tier", "mid", "--agent-id", "bench"}, extra...)
	var out, errb bytes.Buffer
	if code := cli.Main(args, &out, &errb); code != fwtest.ExitOK {
		b.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	if strings.Contains(strings.Join(extra, " "), "--json") {
		var got struct{ Plans []json.RawMessage }
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Plans) != n {
			b.Fatalf("--json: %d plans, want %d (%v)", len(got.Plans), n, err)
		}
	} else if lines := strings.Count(out.String(), "\n"); lines < n/2 {
		b.Fatalf("TSV: %d lines for %d plans", lines, n)
	}
	gitRuns := benchGitRuns(b, args)
	// The raw baseline, measured just before the loop: the machine may be
	// busier or quieter later.
	raw, err := plangen.RawBest(dir, n)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if code := cli.Main(args, io.Discard, io.Discard); code != fwtest.ExitOK {
			b.Fatalf("exit %d", code)
		}
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/float64(raw), "x-raw")
	b.ReportMetric(perOp/float64(n), "ns/plan")
	b.ReportMetric(float64(gitRuns), "git/op")
}

func BenchmarkWorkOnceListJSON(b *testing.B) {
	for _, s := range []struct {
		name string
		n    int
	}{{"1k", 1_000}, {"10k", 10_000}} {
		b.Run(s.name, func(b *testing.B) { benchWorkOnceList(b, s.n, "--json") })
	}
}

func BenchmarkWorkOnceListTSV(b *testing.B) {
	b.Run("10k", func(b *testing.B) { benchWorkOnceList(b, 10_000) })
}
