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

// options are fakeagent's flags.
type options struct {
	exit, lines, calls                 int
	sleep, every                       time.Duration
	errLine, record, pidfile, fw, move string
	child, daemon, spawnDaemon         string
	verdict, write, scope, proposalTo  string
	usageLine, result, running         string
	ignoreTerm, childIgnoreTerm, del   bool
	delTree, reviewFile, commit        bool
}

func parseFlags() options {
	var o options
	flag.IntVar(&o.exit, "exit", 0, "exit status")
	flag.DurationVar(&o.sleep, "sleep", 0, "work this long before exiting")
	flag.IntVar(&o.lines, "lines", 0, "print this many numbered lines to stdout")
	flag.DurationVar(&o.every, "every", 0, "pause between lines")
	flag.StringVar(&o.errLine, "stderr", "", "print this line to stderr")
	flag.StringVar(&o.record, "record", "", "write argv, FLEET_* and the working folder to this file as JSON")
	flag.StringVar(&o.pidfile, "pidfile", "", "write this process's pid here once started")
	flag.StringVar(&o.fw, "fw", "", "fleetwatch binary; with -move, the agent completes its plan itself")
	flag.StringVar(&o.move, "move", "", "completed or review-needed: move the plan there with `fleetwatch complete`")
	flag.BoolVar(&o.ignoreTerm, "ignore-term", false, "ignore SIGTERM")
	flag.StringVar(&o.child, "child", "", "start a grandchild that sleeps, writing its pid to this file")
	flag.BoolVar(&o.childIgnoreTerm, "child-ignore-term", false, "with -child or -daemon: the grandchild ignores SIGTERM")
	flag.StringVar(&o.daemon, "daemon", "", "start a daemon (double fork, setsid, holding this stdout open) that sleeps, writing its pid to this file")
	flag.StringVar(&o.spawnDaemon, "spawn-daemon", "", "internal: the middle process of -daemon")
	flag.BoolVar(&o.del, "delete", false, "delete the plan file before exiting")
	flag.BoolVar(&o.delTree, "delete-tree", false, "delete the whole .plans/ folder, then sleep")
	flag.StringVar(&o.verdict, "verdict", "", "review: print this verdict (ACCEPT, REVISE, ESCALATE, or anything) and findings")
	flag.BoolVar(&o.reviewFile, "review-file", false, "with -verdict: write it to $FLEET_REVIEW instead of stdout")
	flag.StringVar(&o.write, "write", "", "write a file of this name into the working folder")
	flag.BoolVar(&o.commit, "commit", false, "commit a new file in the working folder")
	flag.StringVar(&o.scope, "scope", "", "plan mode (FLEET_MODE=plan): the proposal's Files in scope, comma-separated")
	flag.StringVar(&o.proposalTo, "proposal-to", "", "plan mode: write the proposal here instead of $FLEET_PROPOSAL; \"none\" writes none")
	flag.IntVar(&o.calls, "calls", 0, "POST this many chat completions to $FLEET_BASE_URL/chat/completions, one every -every")
	flag.StringVar(&o.usageLine, "usage-line", "", "append this JSON line to $FLEET_USAGE")
	flag.StringVar(&o.result, "result", "", "print a ## Result section with this text")
	flag.StringVar(&o.running, "running", "", "while working, hold a file of its own in this folder, and append to its seen.log how many it saw there on starting")
	flag.Parse()
	return o
}

func main() {
	o := parseFlags()
	if o.ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if o.record != "" {
		record(o.record)
	}
	if os.Getenv("FLEET_MODE") == "plan" {
		// A plan turn writes its proposal and stops; nothing else runs.
		writeProposal(o.proposalTo, o.scope)
		os.Exit(o.exit)
	}
	if o.running != "" {
		holdRunning(o.running)
	}
	o.startOthers()
	if o.pidfile != "" {
		must(os.WriteFile(o.pidfile, []byte(fmt.Sprint(os.Getpid())), 0o644))
	}
	o.callModel()
	o.print()
	o.changeFiles()
	time.Sleep(o.sleep)
	if o.move != "" {
		c := exec.Command(o.fw, "complete", "--agent-id", os.Getenv("FLEET_AGENT_ID"), "--to", o.move, os.Getenv("FLEET_PLAN"))
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		must(c.Run())
	}
	if o.del {
		must(os.Remove(os.Getenv("FLEET_PLAN")))
	}
	exitNow(o.exit)
}

// record writes what the agent was given (argv, FLEET_*, the working
// folder, the feedback and approved plan it was pointed at) to file.
func record(file string) {
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
	must(os.WriteFile(file, data, 0o644))
}

// startOthers starts the grandchild (-child) and the daemon (-daemon), or
// is the daemon's middle process (-spawn-daemon) and exits.
func (o options) startOthers() {
	self, _ := os.Executable()
	sleeper := []string{"-sleep", "5m"}
	if o.childIgnoreTerm {
		sleeper = append(sleeper, "-ignore-term")
	}
	// The grandchild writes its own pid file once it has set up its
	// signals; waiting for it means a test never races its start.
	if o.child != "" {
		c := exec.Command(self, append(sleeper, "-pidfile", o.child)...)
		must(c.Start())
		waitFile(o.child)
	}
	if o.spawnDaemon != "" {
		// The middle of a double fork: start the daemon in a session of
		// its own and leave it an orphan.
		c := exec.Command(self, append(sleeper, "-pidfile", o.spawnDaemon)...)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		must(c.Start())
		waitFile(o.spawnDaemon)
		os.Exit(0)
	}
	if o.daemon != "" {
		args := []string{"-spawn-daemon", o.daemon}
		if o.childIgnoreTerm {
			args = append(args, "-child-ignore-term")
		}
		c := exec.Command(self, args...)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		must(c.Run())
	}
}

// callModel posts -calls chat completions and appends -usage-line.
func (o options) callModel() {
	for i := 1; i <= o.calls; i++ {
		resp, err := http.Post(os.Getenv("FLEET_BASE_URL")+"/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
		must(err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Printf("call %d: %s\n", i, resp.Status)
		time.Sleep(o.every)
	}
	if o.usageLine != "" {
		f, err := os.OpenFile(os.Getenv("FLEET_USAGE"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		must(err)
		fmt.Fprintln(f, o.usageLine)
		f.Close()
	}
}

// print writes the agent's output: the result, the numbered lines, the
// stderr line and the review verdict.
func (o options) print() {
	if o.result != "" {
		fmt.Printf("## Result\n\n%s\n", o.result)
	}
	for i := 1; i <= o.lines; i++ {
		fmt.Printf("line %d\n", i)
		time.Sleep(o.every)
	}
	if o.errLine != "" {
		fmt.Fprintln(os.Stderr, o.errLine)
	}
	if o.verdict != "" {
		text := o.verdict + "\n\n## Findings\n- reviewed " + os.Getenv("FLEET_COMMIT") + " against " + os.Getenv("FLEET_BASE") + " in mode " + os.Getenv("FLEET_MODE") + "\n"
		if o.reviewFile {
			must(os.WriteFile(os.Getenv("FLEET_REVIEW"), []byte(text), 0o644))
		} else {
			fmt.Print(text)
		}
	}
}

// changeFiles does the agent's work on disk: -write, -commit and
// -delete-tree.
func (o options) changeFiles() {
	if o.write != "" {
		must(os.WriteFile(o.write, []byte("written by fakeagent\n"), 0o644))
	}
	if o.commit {
		must(os.WriteFile("fakeagent-commit.txt", []byte(time.Now().String()+"\n"), 0o644))
		for _, args := range [][]string{{"add", "fakeagent-commit.txt"}, {"-c", "user.name=fake", "-c", "user.email=fake@example.com", "commit", "-q", "-m", "fakeagent commit"}} {
			c := exec.Command("git", args...)
			c.Stderr = os.Stderr
			must(c.Run())
		}
	}
	if o.delTree {
		// FLEET_PLAN is <root>/.plans/<lane>/<name>.
		must(os.RemoveAll(filepath.Dir(filepath.Dir(os.Getenv("FLEET_PLAN")))))
	}
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
