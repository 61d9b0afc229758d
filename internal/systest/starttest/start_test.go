// Package starttest guards what a fleetwatch process does before its
// command runs: Go runs the init of every package linked into the binary
// at every start (each agent verb, heartbeat, cron tick), so what those
// inits cost is paid thousands of times a day. The test counts that work
// without a clock (GODEBUG=inittrace=1: the packages initialised and the
// bytes they allocate); the benchmarks give the CPU figure.
package starttest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main, func() { os.RemoveAll(binDir) }) }

// binDir holds the fleetwatch built for the tests, once per test binary.
var binDir string

var buildFleetwatch = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "starttest-")
	if err != nil {
		return "", err
	}
	binDir = dir
	args := []string{"build", "-o", filepath.Join(dir, "fleetwatch")}
	if raceBuild {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, "github.com/fleetwatch/fleetwatch")...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "fleetwatch"), nil
})

// Bounds on the start's init work, from measurement with headroom: at
// this test's writing a start initialised 135 packages allocating about
// 0.55 MB (7.2 MB, 162 packages before markdown rendering and man pages
// left start-up). The forge's clients came with 0.31 MB of their own
// package tables (GitLab's client-go 0.20 MB, Gitea's SDK 0.07, go-github
// 0.03, retryablehttp 0.01), linked for every build as Go has no lazy init:
// a start measured 0.86 MB after them.
const (
	maxInitBytes    = 1024 << 10
	maxInitPackages = 160
	// goldmark's core parser (util's entity tables, parser's tables) is
	// linked for the preview and so initialised at every start: Go has no
	// lazy init. It is bounded on its own so that it does not grow.
	maxGoldmarkBytes = 300 << 10
)

// notAtStart are the packages no start may initialise: the markdown and
// highlighting libraries fleetwatch left (chroma alone cost 15 ms and 4 MB
// a start), goldmark's extensions (regexps compiled at init), and the man
// pages' writer, which lives in the release program.
var notAtStart = []string{
	"github.com/alecthomas/chroma",
	"github.com/charmbracelet/glamour",
	"github.com/microcosm-cc/bluemonday",
	"github.com/gorilla/css",
	"github.com/russross/blackfriday",
	"github.com/cpuguy83/go-md2man",
	"github.com/spf13/cobra/doc",
	"github.com/yuin/goldmark/extension",
	"github.com/yuin/goldmark/renderer",
	"github.com/dlclark/regexp2",
}

// initRecord is one line of GODEBUG=inittrace=1.
type initRecord struct {
	pkg   string
	bytes int64
}

// parseInits reads inittrace's lines ("init PKG @0.1 ms, 0.2 ms clock,
// 1024 bytes, 3 allocs") from a process's stderr.
func parseInits(t testing.TB, stderr []byte) []initRecord {
	t.Helper()
	var out []initRecord
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.ParseInt(f[7], 10, 64)
		if err != nil {
			t.Fatalf("inittrace line %q: %v", sc.Text(), err)
		}
		out = append(out, initRecord{pkg: f[1], bytes: n})
	}
	return out
}

// fixture is a small tree with w1 holding one plan, and the built
// fleetwatch (a real build of the module's main package, not this test
// binary, whose own packages would count; with -race under -race, where
// the inits are the same).
type fixture struct {
	bin, dir string
	next     int // the plans claimed so far, for complete
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	bin, err := buildFleetwatch()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{bin: bin, dir: fwtest.NewTree(t, fwtest.Plan{Rel: "features/held.md"})}
	fwtest.Want(t, fwtest.Run(t, f.dir, "work-once", "--path", "features/held.md", "--agent-id", "w1"), 0)
	return f
}

// claimNext writes a plan and has w1 claim it: complete's work.
func (f *fixture) claimNext(t testing.TB) string {
	t.Helper()
	f.next++
	name := fmt.Sprintf("p%d.md", f.next)
	fwtest.WritePlan(t, f.dir, fwtest.Plan{Rel: "features/" + name}, time.Minute)
	fwtest.Want(t, fwtest.Run(t, f.dir, "work-once", "--path", "features/"+name, "--agent-id", "w1"), 0)
	return "in-progress/" + name
}

// scenario is one command whose start is measured; args may claim a
// plan first (outside what is measured).
type scenario struct {
	name string
	args func(t testing.TB, f *fixture) []string
}

var scenarios = []scenario{
	{"version", func(testing.TB, *fixture) []string { return []string{"--version"} }},
	{"complete", func(t testing.TB, f *fixture) []string {
		return []string{"complete", f.claimNext(t), "--agent-id", "w1"}
	}},
	{"heartbeat", func(testing.TB, *fixture) []string {
		return []string{"work-once", "--heartbeat", "in-progress/held.md", "--agent-id", "w1"}
	}},
	{"board", func(testing.TB, *fixture) []string { return []string{"board", "--once", "--no-color"} }},
}

// run runs the built fleetwatch in the fixture's tree and returns its
// stderr and the CPU it used (user and system).
func (f *fixture) run(t testing.TB, env []string, args ...string) ([]byte, time.Duration) {
	t.Helper()
	cmd := exec.Command(f.bin, args...)
	cmd.Dir = f.dir
	cmd.Env = append(append(os.Environ(), "USER=tester", "FLEET_AGENT_ID=", "FLEET_ROOT="), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fleetwatch %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage for the process")
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return stderr.Bytes(), cpu
}

// TestStartInitsLittle: each measured command initialises none of the
// libraries that left start-up, and the start's init work stays bounded.
func TestStartInitsLittle(t *testing.T) {
	f := newFixture(t)
	for _, s := range scenarios {
		stderr, _ := f.run(t, []string{"GODEBUG=inittrace=1"}, s.args(t, f)...)
		inits := parseInits(t, stderr)
		if len(inits) == 0 {
			t.Fatalf("%s: no inittrace lines on stderr:\n%s", s.name, stderr)
		}
		var total, goldmark int64
		for _, r := range inits {
			total += r.bytes
			if strings.HasPrefix(r.pkg, "github.com/yuin/goldmark") {
				goldmark += r.bytes
			}
			for _, bad := range notAtStart {
				if strings.HasPrefix(r.pkg, bad) {
					t.Errorf("%s: %s is initialised at start (%d bytes)", s.name, r.pkg, r.bytes)
				}
			}
		}
		// A race build's sync.Pool drops Puts at random, so an init that
		// matches regexps allocates far more there (GitLab's client: 0.2 MB
		// in a normal build, 35 MB under -race): the bytes are bounded on a
		// normal build (go test ./...), the packages on both.
		if !raceBuild && total > maxInitBytes {
			t.Errorf("%s: inits allocate %d bytes at start, more than %d:\n%s", s.name, total, maxInitBytes, heaviest(inits))
		}
		if len(inits) > maxInitPackages {
			t.Errorf("%s: %d packages do init work at start, more than %d", s.name, len(inits), maxInitPackages)
		}
		if goldmark > maxGoldmarkBytes {
			t.Errorf("%s: goldmark's inits allocate %d bytes, more than %d", s.name, goldmark, maxGoldmarkBytes)
		}
	}
}

// heaviest lists the inits that allocate 10 KB or more, for a failure.
func heaviest(inits []initRecord) string {
	var b strings.Builder
	for _, r := range inits {
		if r.bytes >= 10<<10 {
			fmt.Fprintf(&b, "  %8d %s\n", r.bytes, r.pkg)
		}
	}
	return b.String()
}

// The parser reads the lines inittrace prints, and only those.
func TestParseInits(t *testing.T) {
	got := parseInits(t, []byte("init runtime @0.011 ms, 0.032 ms clock, 0 bytes, 0 allocs\n"+
		"fleetwatch: an error\n"+
		"init github.com/yuin/goldmark/util @1.1 ms, 0.24 ms clock, 139464 bytes, 437 allocs\n"))
	if len(got) != 2 || got[1].pkg != "github.com/yuin/goldmark/util" || got[1].bytes != 139464 {
		t.Errorf("parseInits = %+v", got)
	}
}

// BenchmarkStart measures the CPU (user and system, from the child's
// rusage) of each command on a small tree, as ms-cpu/op: go test
// ./internal/systest/starttest -run ^$ -bench Start.
func BenchmarkStart(b *testing.B) {
	f := newFixture(b)
	for _, s := range scenarios {
		b.Run(s.name, func(b *testing.B) {
			var cpu time.Duration
			for range b.N {
				b.StopTimer()
				args := s.args(b, f)
				b.StartTimer()
				_, used := f.run(b, nil, args...)
				cpu += used
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "ms-cpu/op")
		})
	}
}
