// Command fakedriver stands in for `fleetwatch work-once` in tests of
// spawning and stopping workers: it records its command line, optionally
// writes a state file and log lines like the driver, and sleeps or exits
// as <root>/.fake/<agent>.conf says (key=value lines: sleep=2s, exit=3,
// state=1, lines=N, grandchild=1). On SIGTERM it records
// <agent>.term and exits 0.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "grandchild" {
		grandchild(os.Args[2])
		return
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	args := os.Args[1:]
	root, agent := value(args, "--root"), value(args, "--agent-id")
	dir := filepath.Join(root, ".fake")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err)
	}
	base := filepath.Join(dir, tree.SafeID(agent))
	data, _ := json.Marshal(args)
	write(base+".argv", string(data))

	conf := map[string]string{}
	text, _ := os.ReadFile(base + ".conf")
	for _, line := range strings.Split(string(text), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			conf[k] = v
		}
	}
	sleep, _ := time.ParseDuration(conf["sleep"])
	sleep = min(sleep, time.Minute) // never outlive a test run for long
	code, _ := strconv.Atoi(conf["exit"])
	host, _ := os.Hostname()
	st := look.State{
		PID: os.Getpid(), AgentID: agent, Tier: value(args, "--tier"), Model: value(args, "--model"),
		Plan: "in-progress/fake-plan.md", State: look.StateRunning, Host: host,
		Started: look.Stamp{Time: time.Now()}, LastHeartbeat: look.Stamp{Time: time.Now()},
		HeartbeatEvery: 30, Note: "fake driver",
	}
	if conf["state"] == "1" {
		if err := look.WriteState(root, st); err != nil {
			fail(err)
		}
	}
	if conf["grandchild"] == "1" {
		gc := exec.Command(os.Args[0], "grandchild", base+".grandchild-term")
		if err := gc.Start(); err != nil {
			fail(err)
		}
	}
	n, _ := strconv.Atoi(conf["lines"])
	for i := 1; i <= n; i++ {
		fmt.Fprintf(os.Stderr, "%s out fake line %d\n", time.Now().UTC().Format(look.LogTimeLayout), i)
	}
	exited := func(code int, note string) {
		if conf["state"] == "1" {
			st.State, st.ExitCode, st.Note = look.StateExited, &code, note
			_ = look.WriteState(root, st)
		}
		os.Exit(code)
	}
	select {
	case <-time.After(sleep):
		exited(code, "fake driver done")
	case <-term:
		write(base+".term", "SIGTERM")
		exited(0, "stopped by SIGTERM")
	}
}

// grandchild stands in for the executor: it records the SIGTERM its group
// gets.
func grandchild(mark string) {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	write(mark+".ready", "ready")
	select {
	case <-term:
		write(mark, "SIGTERM")
	case <-time.After(time.Minute):
	}
}

func value(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func write(path, text string) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fakedriver:", err)
	os.Exit(2)
}
