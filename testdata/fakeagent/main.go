// Command fakeagent stands in for an AI coding agent in fleetwatch's tests.
// Its flags say how long it works, what it prints, how it exits, whether it
// moves its plan itself and whether it obeys SIGTERM; it records what it was
// given so a test can check the executor hand-off.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	exit := flag.Int("exit", 0, "exit status")
	sleep := flag.Duration("sleep", 0, "work this long before exiting")
	lines := flag.Int("lines", 0, "print this many numbered lines to stdout")
	every := flag.Duration("every", 0, "pause between lines")
	errLine := flag.String("stderr", "", "print this line to stderr")
	record := flag.String("record", "", "write argv, FLEET_* and the working folder to this file as JSON")
	pidfile := flag.String("pidfile", "", "write this process's pid here once started")
	fw := flag.String("fw", "", "fleetwatch binary; with -move, the agent completes its plan itself")
	move := flag.String("move", "", "completed or review-needed: move the plan there with `fleetwatch complete`")
	ignoreTerm := flag.Bool("ignore-term", false, "ignore SIGTERM")
	child := flag.String("child", "", "start a grandchild that sleeps, writing its pid to this file")
	del := flag.Bool("delete", false, "delete the plan file before exiting")
	flag.Parse()

	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if *record != "" {
		cwd, _ := os.Getwd()
		env := map[string]string{}
		for _, kv := range os.Environ() {
			if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "FLEET_") {
				env[k] = v
			}
		}
		data, _ := json.Marshal(map[string]any{"args": os.Args[1:], "env": env, "cwd": cwd})
		must(os.WriteFile(*record, data, 0o644))
	}
	if *child != "" {
		self, _ := os.Executable()
		c := exec.Command(self, "-sleep", "5m")
		must(c.Start())
		must(os.WriteFile(*child, []byte(fmt.Sprint(c.Process.Pid)), 0o644))
	}
	if *pidfile != "" {
		must(os.WriteFile(*pidfile, []byte(fmt.Sprint(os.Getpid())), 0o644))
	}
	for i := 1; i <= *lines; i++ {
		fmt.Printf("line %d\n", i)
		time.Sleep(*every)
	}
	if *errLine != "" {
		fmt.Fprintln(os.Stderr, *errLine)
	}
	time.Sleep(*sleep)
	if *move != "" {
		c := exec.Command(*fw, "complete", "--agent-id", os.Getenv("FLEET_AGENT_ID"), "--to", *move, os.Getenv("FLEET_PLAN"))
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		must(c.Run())
	}
	if *del {
		must(os.Remove(os.Getenv("FLEET_PLAN")))
	}
	os.Exit(*exit)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		os.Exit(3)
	}
}
