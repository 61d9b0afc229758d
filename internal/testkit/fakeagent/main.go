// Command fakeagent stands in for an AI coding agent in fleetwatch's tests.
// Its flags say how long it works, what it prints, how it exits, whether it
// moves its plan itself and whether it obeys SIGTERM; it records what it was
// given so a test can check the executor hand-off. Under FLEET_MODE=plan it
// only writes a proposal (with -scope as its Files in scope) and exits.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
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
	childIgnoreTerm := flag.Bool("child-ignore-term", false, "with -child or -daemon: the grandchild ignores SIGTERM")
	daemon := flag.String("daemon", "", "start a daemon (double fork, setsid, holding this stdout open) that sleeps, writing its pid to this file")
	spawnDaemon := flag.String("spawn-daemon", "", "internal: the middle process of -daemon")
	del := flag.Bool("delete", false, "delete the plan file before exiting")
	delTree := flag.Bool("delete-tree", false, "delete the whole .plans/ folder, then sleep")
	verdict := flag.String("verdict", "", "review: print this verdict (ACCEPT, REVISE, ESCALATE, or anything) and findings")
	reviewFile := flag.Bool("review-file", false, "with -verdict: write it to $FLEET_REVIEW instead of stdout")
	write := flag.String("write", "", "write a file of this name into the working folder")
	commit := flag.Bool("commit", false, "commit a new file in the working folder")
	scope := flag.String("scope", "", "plan mode (FLEET_MODE=plan): the proposal's Files in scope, comma-separated")
	proposalTo := flag.String("proposal-to", "", "plan mode: write the proposal here instead of $FLEET_PROPOSAL; \"none\" writes none")
	calls := flag.Int("calls", 0, "POST this many chat completions to $FLEET_BASE_URL/chat/completions, one every -every")
	usageLine := flag.String("usage-line", "", "append this JSON line to $FLEET_USAGE")
	result := flag.String("result", "", "print a ## Result section with this text")
	running := flag.String("running", "", "while working, hold a file of its own in this folder, and append to its seen.log how many it saw there on starting")
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
		rec := map[string]any{"args": os.Args[1:], "env": env, "cwd": cwd}
		if fb := os.Getenv("FLEET_FEEDBACK"); fb != "" {
			text, err := os.ReadFile(fb)
			must(err)
			rec["feedback"] = string(text)
		}
		if ap := os.Getenv("FLEET_APPROVED_PLAN"); ap != "" {
			text, err := os.ReadFile(ap)
			must(err)
			rec["approved_plan"] = string(text)
		}
		data, _ := json.Marshal(rec)
		must(os.WriteFile(*record, data, 0o644))
	}
	if os.Getenv("FLEET_MODE") == "plan" {
		// A plan turn writes its proposal and stops; nothing else runs.
		writeProposal(*proposalTo, *scope)
		os.Exit(*exit)
	}
	if *running != "" {
		holdRunning(*running)
	}
	self, _ := os.Executable()
	sleeper := []string{"-sleep", "5m"}
	if *childIgnoreTerm {
		sleeper = append(sleeper, "-ignore-term")
	}
	// The grandchild writes its own pid file once it has set up its
	// signals; waiting for it means a test never races its start.
	if *child != "" {
		c := exec.Command(self, append(sleeper, "-pidfile", *child)...)
		must(c.Start())
		waitFile(*child)
	}
	if *spawnDaemon != "" {
		// The middle of a double fork: start the daemon in a session of
		// its own and leave it an orphan.
		c := exec.Command(self, append(sleeper, "-pidfile", *spawnDaemon)...)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		must(c.Start())
		waitFile(*spawnDaemon)
		os.Exit(0)
	}
	if *daemon != "" {
		args := []string{"-spawn-daemon", *daemon}
		if *childIgnoreTerm {
			args = append(args, "-child-ignore-term")
		}
		c := exec.Command(self, args...)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		must(c.Run())
	}
	if *pidfile != "" {
		must(os.WriteFile(*pidfile, []byte(fmt.Sprint(os.Getpid())), 0o644))
	}
	for i := 1; i <= *calls; i++ {
		resp, err := http.Post(os.Getenv("FLEET_BASE_URL")+"/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
		must(err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Printf("call %d: %s\n", i, resp.Status)
		time.Sleep(*every)
	}
	if *usageLine != "" {
		f, err := os.OpenFile(os.Getenv("FLEET_USAGE"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		must(err)
		fmt.Fprintln(f, *usageLine)
		f.Close()
	}
	if *result != "" {
		fmt.Printf("## Result\n\n%s\n", *result)
	}
	for i := 1; i <= *lines; i++ {
		fmt.Printf("line %d\n", i)
		time.Sleep(*every)
	}
	if *errLine != "" {
		fmt.Fprintln(os.Stderr, *errLine)
	}
	if *verdict != "" {
		text := *verdict + "\n\n## Findings\n- reviewed " + os.Getenv("FLEET_COMMIT") + " against " + os.Getenv("FLEET_BASE") + " in mode " + os.Getenv("FLEET_MODE") + "\n"
		if *reviewFile {
			must(os.WriteFile(os.Getenv("FLEET_REVIEW"), []byte(text), 0o644))
		} else {
			fmt.Print(text)
		}
	}
	if *write != "" {
		must(os.WriteFile(*write, []byte("written by fakeagent\n"), 0o644))
	}
	if *commit {
		must(os.WriteFile("fakeagent-commit.txt", []byte(time.Now().String()+"\n"), 0o644))
		for _, args := range [][]string{{"add", "fakeagent-commit.txt"}, {"-c", "user.name=fake", "-c", "user.email=fake@example.com", "commit", "-q", "-m", "fakeagent commit"}} {
			c := exec.Command("git", args...)
			c.Stderr = os.Stderr
			must(c.Run())
		}
	}
	if *delTree {
		// FLEET_PLAN is <root>/.plans/<lane>/<name>.
		must(os.RemoveAll(filepath.Dir(filepath.Dir(os.Getenv("FLEET_PLAN")))))
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
	exitNow(*exit)
}

// exits are what runs before the process exits (os.Exit runs no defers).
var exits []func()

func exitNow(code int) {
	for _, f := range exits {
		f()
	}
	os.Exit(code)
}

// holdRunning creates dir/run-PID (O_EXCL) for as long as the agent
// works and appends the number of run-* files dir holds then, and its
// plan, to dir/seen.log: of agents running at once, the last to start
// sees them all, so the largest count logged is the most that ever ran
// at once. exitNow removes the file.
func holdRunning(dir string) {
	mine := filepath.Join(dir, fmt.Sprintf("run-%d", os.Getpid()))
	f, err := os.OpenFile(mine, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	must(err)
	f.Close()
	ents, err := os.ReadDir(dir)
	must(err)
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "run-") {
			n++
		}
	}
	log, err := os.OpenFile(filepath.Join(dir, "seen.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	must(err)
	fmt.Fprintf(log, "%d %s\n", n, os.Getenv("FLEET_SLUG"))
	log.Close()
	exits = append(exits, func() { os.Remove(mine) })
}

func waitFile(p string) {
	for range 1000 {
		if data, err := os.ReadFile(p); err == nil && len(data) > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	must(fmt.Errorf("%s never appeared", p))
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		os.Exit(3)
	}
}

// writeProposal writes a plan turn's proposal with scope as its Files in
// scope (to $FLEET_PROPOSAL, or to, or nowhere when to is "none").
func writeProposal(to, scope string) {
	if to == "" {
		to = os.Getenv("FLEET_PROPOSAL")
	}
	if to == "none" {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Proposal for %s\n\nBy %s.\n", os.Getenv("FLEET_SLUG"), os.Getenv("FLEET_AGENT_ID"))
	if fb := os.Getenv("FLEET_FEEDBACK"); fb != "" {
		b.WriteString("\nAnswering the feedback in " + fb + ".\n")
	}
	b.WriteString("\n## Files in scope\n")
	for _, p := range strings.Split(scope, ",") {
		if p = strings.TrimSpace(p); p != "" {
			b.WriteString("- " + p + "\n")
		}
	}
	must(os.WriteFile(to, []byte(b.String()), 0o644))
}
