//go:build linux

package boundarytest

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

func intruder(t *testing.T) string { return fwtest.Program(t, "./testdata/intruder") }

// terminal is a real pseudo-terminal, raw, so that anything pushed into
// its input is counted by TIOCINQ, whole lines or not.
type terminal struct {
	master, slave *os.File
	out           bytes.Buffer
	mu            sync.Mutex
	drained       chan struct{}
}

func newTerminal(t *testing.T) *terminal {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if _, err := term.MakeRaw(int(slave.Fd())); err != nil {
		t.Fatal(err)
	}
	tt := &terminal{master: master, slave: slave, drained: make(chan struct{})}
	go func() {
		defer close(tt.drained)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			tt.mu.Lock()
			tt.out.Write(buf[:n])
			tt.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		slave.Close()
		master.Close()
	})
	return tt
}

// pending is how many bytes wait in the terminal's input: what a shell
// reading it would run.
func (tt *terminal) pending(t *testing.T) int {
	t.Helper()
	n, err := unix.IoctlGetInt(int(tt.slave.Fd()), unix.TIOCINQ)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (tt *terminal) output() string {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.out.String()
}

// runIn runs cmd as a person's shell would: a session leader whose
// controlling terminal is tt, its streams on it. It waits, limit at most.
func runIn(t *testing.T, tt *terminal, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tt.slave, tt.slave, tt.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not finish within %v; its terminal:\n%s", cmd.Args, limit, tt.output())
	}
	return -1
}

// wantDenied fails for each attack the log does not show denied.
func wantDenied(t *testing.T, log string, attacks ...string) {
	t.Helper()
	for _, a := range attacks {
		if !strings.Contains(log, "attack "+a+": denied") {
			t.Errorf("attack %s was not denied", a)
		}
	}
	if t.Failed() {
		t.Logf("log:\n%s", log)
	}
}

// grepTree is every line under dir that contains s.
func grepTree(dir, s string) string {
	var out strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		data, _ := io.ReadAll(f)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, s) {
				out.WriteString(line + "\n")
			}
		}
		return nil
	})
	return out.String()
}
