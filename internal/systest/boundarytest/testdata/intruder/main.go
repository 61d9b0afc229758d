// Command intruder stands in for an agent (or a check) that reaches past
// its sandbox for what belongs to the person running fleetwatch: their
// terminal, the kernel's devices, its capabilities, the machine's process
// table, a pause, the gate. It prints one line per attempt ("attack NAME:
// denied (why)" or "attack NAME: ALLOWED"), then, as an agent, commits
// honest work and hands its plan in.
//
//	intruder FLEETWATCH tty VICTIM   the terminal attacks; VICTIM is a terminal it must not reach
//	intruder FLEETWATCH check VICTIM the same, as a check (no plan to hand in)
//	intruder FLEETWATCH procs N      start N processes, counting how many the kernel let start
//	intruder FLEETWATCH pause        count in the worktree's file "counter", with a setsid
//	                                 helper sending SIGCONT, until the file "done" appears
//	intruder FLEETWATCH gate         the person's verbs from a setsid helper with a clean environment
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: intruder FLEETWATCH MODE [ARG]")
		os.Exit(2)
	}
	fw, mode := os.Args[1], os.Args[2]
	arg := ""
	if len(os.Args) > 3 {
		arg = os.Args[3]
	}
	switch mode {
	case "tty":
		terminal(arg)
		devices()
		honest(fw)
	case "check":
		terminal(arg)
		devices()
	case "procs":
		n, _ := strconv.Atoi(arg)
		procs(n)
		honest(fw)
	case "pause":
		pause()
		honest(fw)
	case "waker":
		waker(arg)
	case "gate":
		gate(fw)
		honest(fw)
	}
}

func attack(name string, err error) {
	if err != nil {
		fmt.Printf("attack %s: denied (%s)\n", name, strings.ReplaceAll(err.Error(), "\n", " "))
	} else {
		fmt.Printf("attack %s: ALLOWED\n", name)
	}
}

// sti pushes "#" into fd's terminal input, as if typed there.
func sti(fd int) error {
	c := byte('#')
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c))); e != 0 {
		return e
	}
	return nil
}

// terminal tries to type into a terminal: its controlling one, whatever
// its standard streams are, and victim's by path.
func terminal(victim string) {
	attack("tiocsti-dev-tty", func() error {
		f, err := os.OpenFile("/dev/tty", os.O_RDONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		return sti(int(f.Fd()))
	}())
	for fd := 0; fd <= 2; fd++ {
		attack(fmt.Sprintf("tiocsti-fd%d", fd), sti(fd))
	}
	if victim == "" {
		return
	}
	attack("tiocsti-victim", func() error {
		f, err := os.OpenFile(victim, os.O_RDONLY|unix.O_NOCTTY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		return sti(int(f.Fd()))
	}())
	attack("write-victim", func() error {
		f, err := os.OpenFile(victim, os.O_WRONLY|unix.O_NOCTTY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString("written by an intruder\r\n")
		return err
	}())
	attack("steal-ctty", func() error {
		f, err := os.OpenFile(victim, os.O_RDONLY|unix.O_NOCTTY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		return unix.IoctlSetInt(int(f.Fd()), unix.TIOCSCTTY, 1)
	}())
}

// devices tries to make and use a kernel device, and reports the
// capabilities it holds.
func devices() {
	attack("mknod-kmsg", func() error {
		p := filepath.Join(os.TempDir(), "kmsg")
		if err := unix.Mknod(p, unix.S_IFCHR|0o600, int(unix.Mkdev(1, 11))); err != nil {
			return err
		}
		return os.WriteFile(p, []byte("<0>written by an intruder\n"), 0)
	}())
	attack("capabilities", func() error {
		data, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			k, v, _ := strings.Cut(line, ":")
			if (k == "CapEff" || k == "CapPrm" || k == "CapBnd" || k == "CapAmb") && strings.Trim(strings.TrimSpace(v), "0") != "" {
				return nil
			}
		}
		return errors.New("none held")
	}())
}

// procs starts up to n sleeping processes, reports how many started, and
// ends them.
func procs(n int) {
	var started []*exec.Cmd
	var err error
	for range n {
		c := exec.Command("sleep", "30")
		if err = c.Start(); err != nil {
			break
		}
		started = append(started, c)
	}
	fmt.Printf("started %d of %d\n", len(started), n)
	if len(started) == n {
		err = nil
	} else if err == nil {
		err = errors.New("stopped early")
	}
	attack("fork-bomb", err)
	for _, c := range started {
		c.Process.Kill()
		c.Wait()
	}
}

// pause counts in the worktree while a helper that left its process group
// keeps sending it SIGCONT.
func pause() {
	wt := os.Getenv("FLEET_WORKTREE")
	helper := exec.Command(os.Args[0], os.Args[1], "waker", strconv.Itoa(os.Getpid()))
	helper.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := helper.Start(); err != nil {
		fmt.Println("waker:", err)
	}
	for i := 0; i < 6000; i++ {
		os.WriteFile(filepath.Join(wt, "counter"), []byte(strconv.Itoa(i)), 0o644)
		if _, err := os.Stat(filepath.Join(wt, "done")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	os.Remove(filepath.Join(wt, "counter"))
	os.Remove(filepath.Join(wt, "done"))
	if helper.Process != nil {
		helper.Process.Kill()
		helper.Wait()
	}
}

func waker(pid string) {
	p, _ := strconv.Atoi(pid)
	for range 6000 {
		syscall.Kill(p, syscall.SIGCONT)
		time.Sleep(5 * time.Millisecond)
	}
}

// gate runs the person's verbs from a helper in a session of its own with
// nothing of the agent in its environment.
func gate(fw string) {
	root := os.Getenv("FLEET_ROOT")
	// The test binary stands in for fleetwatch when this is set.
	clean := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "USER=tester",
		"FLEETWATCH_TEST_AS_MAIN=" + os.Getenv("FLEETWATCH_TEST_AS_MAIN")}
	run := func(args ...string) error {
		c := exec.Command(fw, args...)
		c.Env = clean
		c.Dir = root
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		out, err := c.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	attack("budget-extend", run("budget", "extend", "other", "--by", "1M", "--root", root))
	attack("approve", run("review", "other", "--approve", "--root", root))
}

// honest commits a file on its own branch and hands its plan in.
func honest(fw string) {
	wt := os.Getenv("FLEET_WORKTREE")
	run := func(name string, args ...string) {
		c := exec.Command(name, args...)
		c.Dir = wt
		if out, err := c.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "intruder: %s %v: %v: %s\n", name, args, err, out)
			os.Exit(3)
		}
	}
	if err := os.WriteFile(filepath.Join(wt, "feature.txt"), []byte("honest work\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "intruder:", err)
		os.Exit(3)
	}
	run("git", "add", "feature.txt")
	run("git", "-c", "user.name=agent", "-c", "user.email=agent@example.com", "commit", "-q", "-m", "honest work")
	run(fw, "complete", "--to", "review-needed", os.Getenv("FLEET_PLAN"))
	fmt.Println("honest work handed in")
}
