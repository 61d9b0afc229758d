// Command lostagent stands in for a coding agent whose run ends badly: it
// commits in its worktree, then exits with a given code, or leaves a
// setsid daemon behind and hangs, deaf to SIGTERM, until someone kills it.
//
//	lostagent [-commit PATH=MESSAGE]... [-fifo-ref] [-daemon FILE] [-pidfile FILE] [-exit N | -hang]
//
// Each -commit writes PATH in the worktree and commits it with MESSAGE;
// -fifo-ref then makes its branch's ref in its own git store a FIFO, which
// blocks whoever opens it to read; -daemon starts a daemon in a session of
// its own that writes its pid to FILE; -pidfile writes the agent's own pid.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "daemon" {
		daemon(os.Args[2])
	}
	wt := os.Getenv("FLEET_WORKTREE")
	code, hang := 0, false
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		next := func() string {
			i++
			if i >= len(args) {
				fail(fmt.Errorf("%s wants a value", args[i-1]))
			}
			return args[i]
		}
		switch a := args[i]; a {
		case "-commit":
			p, msg, _ := strings.Cut(next(), "=")
			commit(wt, p, msg)
		case "-fifo-ref":
			fifoRef()
		case "-daemon":
			cmd := exec.Command(os.Args[0], "daemon", next())
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Start(); err != nil {
				fail(err)
			}
		case "-pidfile":
			writePID(next())
		case "-exit":
			n, err := strconv.Atoi(next())
			if err != nil {
				fail(err)
			}
			code = n
		case "-hang":
			hang = true
		default:
			fail(fmt.Errorf("unknown argument %q", a))
		}
	}
	if hang {
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		fmt.Println("working on, deaf to SIGTERM")
		for {
			time.Sleep(time.Hour)
		}
	}
	os.Exit(code)
}

// commit writes p in the worktree and commits it; the driver's git
// environment points git at the agent's own store.
func commit(wt, p, msg string) {
	full := filepath.Join(wt, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		fail(err)
	}
	if err := os.WriteFile(full, []byte(msg+"\n"), 0o644); err != nil {
		fail(err)
	}
	for _, args := range [][]string{
		{"add", p},
		{"-c", "user.name=agent", "-c", "user.email=agent@example.com", "commit", "-q", "-m", msg},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = wt
		if out, err := cmd.CombinedOutput(); err != nil {
			fail(fmt.Errorf("git %s: %v: %s", args[0], err, out))
		}
	}
	fmt.Printf("committed %q\n", msg)
}

// fifoRef replaces the ref HEAD names in the agent's git store with a FIFO.
func fifoRef() {
	store := os.Getenv("GIT_DIR")
	head, err := os.ReadFile(filepath.Join(store, "HEAD"))
	if err != nil {
		fail(err)
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: ")
	if !ok || store == "" {
		fail(fmt.Errorf("no branch in %s", store))
	}
	p := filepath.Join(store, filepath.FromSlash(ref))
	if err := os.Remove(p); err != nil {
		fail(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		fail(err)
	}
	fmt.Println("made " + ref + " a FIFO")
}

// daemon writes its pid to file and runs until killed.
func daemon(file string) {
	signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
	writePID(file)
	for {
		time.Sleep(time.Hour)
	}
}

func writePID(file string) {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		fail(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "lostagent:", err)
	os.Exit(3)
}
