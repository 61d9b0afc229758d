package serve_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/plangen"
	"github.com/fleetwatch/fleetwatch/ui/demo"
)

// cpuNow is this process's CPU time so far (user + system).
func cpuNow(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssMB is VmRSS from /proc/self/status, in MB.
func rssMB(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

// BenchmarkChange is issue 27's three figures for served sessions, each
// an OpenSSH client in its own process on its own 120x40 PTY (so
// RUSAGE_SELF is the server's CPU alone), on the demo project and on a
// generated 1,000-plan one. A change is a new plan on disk; it has reached
// a screen when the header counts it. Reported:
//
// cpu-ms/extra-session, what one change costs for each session beyond the
// first: (CPU per change with 20 open − with 1) / 19, idle CPU taken out
// of both; idle-cpu-ms/s/session, what an open session costs a second
// while nothing changes: (the server's CPU a second with 20 open − with
// 1) / 19 (idle-cpu-ms/s: with 20, in all); ms-to-all-screens, from the
// write until all 20 screens show the plan (max-: the slowest).
//
//	go test ./ui/serve -run '^$' -bench Change -benchtime 20x
func BenchmarkChange(b *testing.B) {
	b.Run("project=demo", func(b *testing.B) {
		project, err := demo.Create(filepath.Join(b.TempDir(), "jotter"), time.Now(), nil)
		if err != nil {
			b.Fatal(err)
		}
		benchChange(b, project)
	})
	b.Run("project=1k", func(b *testing.B) {
		project := filepath.Join(b.TempDir(), "jotter")
		if err := plangen.Write(project, 1_000, time.Now()); err != nil {
			b.Fatal(err)
		}
		benchChange(b, project)
	})
}

const benchSessions = 20

func benchChange(b *testing.B, project string) {
	if _, err := exec.LookPath("ssh"); err != nil {
		b.Skipf("the OpenSSH client is not installed (.ci/run installs it): %v", err)
	}
	alice := newKey(b, "", "alice@laptop")
	s := startServer(b, project, []key{alice}, nil)
	keyFile := filepath.Join(b.TempDir(), "id")
	if err := os.WriteFile(keyFile, alice.priv, 0o600); err != nil {
		b.Fatal(err)
	}
	c := &changer{b: b, project: project}
	c.open(s.addr, keyFile, 1)
	idleOne := c.idleRate()
	one := c.changes(10, idleOne)
	c.open(s.addr, keyFile, benchSessions-1)
	idle := c.idleRate()
	b.ResetTimer()
	many := c.changes(b.N, idle)
	b.StopTimer()
	extra := (many.cpu - one.cpu) / (benchSessions - 1)
	b.ReportMetric(ms(extra), "cpu-ms/extra-session")
	b.ReportMetric(ms(many.cpu), "cpu-ms/change")
	b.ReportMetric((idle-idleOne)*1e3/(benchSessions-1), "idle-cpu-ms/s/session")
	b.ReportMetric(idle*1e3, "idle-cpu-ms/s")
	b.ReportMetric(ms(many.wall), "ms-to-all-screens")
	b.ReportMetric(ms(many.worst), "max-ms-to-all-screens")
	b.ReportMetric(rssMB(b), "RSS-MB")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// changer makes changes on disk and times them on every open screen.
type changer struct {
	b       *testing.B
	project string
	terms   []*sshTerm
	made    int
	plans   int // the plans the header counted before the first change
}

// open opens n more sessions and waits until each shows the project and
// the first readings have settled.
func (c *changer) open(addr, keyFile string, n int) {
	for range n {
		tm := startSSH(c.b, addr, keyFile)
		tm.waitFor(c.b, 30*time.Second, 0, "jotter")
		c.terms = append(c.terms, tm)
	}
	time.Sleep(time.Second)
	if c.plans == 0 {
		m := regexp.MustCompile(`(\d+) plans`).FindAllStringSubmatch(ansi.Strip(c.terms[0].out.String()), -1)
		if m == nil {
			c.b.Fatal("the header counts no plans")
		}
		c.plans, _ = strconv.Atoi(m[len(m)-1][1])
	}
}

// idleRate is the server's CPU a second while nothing changes.
func (c *changer) idleRate() float64 {
	from, start := cpuNow(c.b), time.Now()
	time.Sleep(3 * time.Second)
	return float64(cpuNow(c.b)-from) / float64(time.Since(start))
}

// cost is the mean of n changes: CPU less idle, wall time to every screen,
// and the slowest.
type cost struct{ cpu, wall, worst time.Duration }

func (c *changer) changes(n int, idle float64) cost {
	var sum cost
	for range n {
		marks := make([]int, len(c.terms))
		for j, tm := range c.terms {
			marks[j] = tm.out.Len()
		}
		c.made++
		slug := fmt.Sprintf("bench-%d", c.made)
		c0, t0 := cpuNow(c.b), time.Now()
		fwtest.WritePlan(c.b, c.project, fwtest.Plan{Rel: "bugs/" + slug + ".md", Fields: "Priority: P0; Preferred models: mid"}, time.Second)
		// The header's count: on every screen, whichever plans it lists.
		want := fmt.Sprintf(" %d plans", c.plans+c.made)
		var wg sync.WaitGroup
		for j, tm := range c.terms {
			wg.Go(func() { tm.waitFor(c.b, 5*time.Second, marks[j], want) })
		}
		wg.Wait()
		took := time.Since(t0)
		sum.wall += took
		sum.worst = max(sum.worst, took)
		// Let the last frames and the hub's other readings finish.
		time.Sleep(250 * time.Millisecond)
		sum.cpu += cpuNow(c.b) - c0 - time.Duration(idle*float64(time.Since(t0)))
	}
	return cost{cpu: sum.cpu / time.Duration(n), wall: sum.wall / time.Duration(n), worst: sum.worst}
}

// sshTerm is the OpenSSH client on a PTY of its own, its output kept.
type sshTerm struct {
	cmd *exec.Cmd
	out *syncBuf
}

func startSSH(b *testing.B, addr, keyFile string) *sshTerm {
	b.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("ssh", "-tt", "-F", "/dev/null", "-i", keyFile, "-p", port, "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR", host)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		b.Fatal(err)
	}
	tm := &sshTerm{cmd: cmd, out: &syncBuf{}}
	go io.Copy(tm.out, f)
	b.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
	})
	return tm
}

// waitFor waits until want is in what the client received after from.
func (tm *sshTerm) waitFor(b *testing.B, limit time.Duration, from int, want string) {
	deadline := time.Now().Add(limit)
	for {
		if tm.out.containsSince(from, want) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("after %v the screen does not show %q", limit, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
