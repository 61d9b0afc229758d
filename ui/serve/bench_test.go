package serve_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"fleetwatch/internal/testkit/fwtest"
	"fleetwatch/ui/demo"
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

// BenchmarkChange: a new plan on disk in the demo project with 1 and 20
// sessions open, each an OpenSSH client in its own process on its own PTY
// (so RUSAGE_SELF is the server's CPU alone). It reports the CPU per change, the time until every screen
// shows the new plan, the idle CPU per session and the RSS.
//
//	go test ./serve -run '^$' -bench Change -benchtime 20x
func BenchmarkChange(b *testing.B) {
	for _, n := range []int{1, 20} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) { benchChange(b, n) })
	}
}

func benchChange(b *testing.B, n int) {
	if _, err := exec.LookPath("ssh"); err != nil {
		b.Skipf("the OpenSSH client is not installed (.ci/run installs it): %v", err)
	}
	project, err := demo.Create(filepath.Join(b.TempDir(), "jotter"), time.Now(), nil)
	if err != nil {
		b.Fatal(err)
	}
	alice := newKey(b, "", "alice@laptop")
	s := startServer(b, project, []key{alice}, nil)
	keyFile := filepath.Join(b.TempDir(), "id")
	if err := os.WriteFile(keyFile, alice.priv, 0o600); err != nil {
		b.Fatal(err)
	}
	terms := make([]*sshTerm, n)
	for i := range terms {
		terms[i] = startSSH(b, s.addr, keyFile)
	}
	for _, tm := range terms {
		tm.waitFor(b, 20*time.Second, 0, "jotter")
	}
	time.Sleep(500 * time.Millisecond) // the first readings settle
	idleFrom, idleStart := cpuNow(b), time.Now()
	time.Sleep(2 * time.Second)
	idle := float64(cpuNow(b)-idleFrom) / float64(time.Since(idleStart)) * 1000 // cpu-ms per second
	b.ResetTimer()
	var cpu, wall time.Duration
	for i := range b.N {
		marks := make([]int, n)
		for j, tm := range terms {
			marks[j] = tm.out.Len()
		}
		slug := fmt.Sprintf("bench-%d-%d", n, i)
		c0, t0 := cpuNow(b), time.Now()
		// Each new plan the oldest P0, so it sorts first and is on screen.
		fwtest.WritePlan(b, project, fwtest.Plan{Rel: "bugs/" + slug + ".md", Fields: "Priority: P0; Preferred models: mid",
			Age: time.Duration(i+1) * 24 * time.Hour}, time.Second)
		var wg sync.WaitGroup
		for j, tm := range terms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tm.waitFor(b, 5*time.Second, marks[j], slug)
			}()
		}
		wg.Wait()
		wall += time.Since(t0)
		// Let the last frames and the hub's other readings finish.
		time.Sleep(150 * time.Millisecond)
		cpu += cpuNow(b) - c0
	}
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/change")
	b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "ms-to-all-screens")
	b.ReportMetric(idle/float64(n), "idle-cpu-ms/s/session")
	b.ReportMetric(rssMB(b), "RSS-MB")
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
