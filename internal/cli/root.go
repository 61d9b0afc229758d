// Package cli is fleetwatch's command line: it parses command lines and
// turns the engine's answers into output and exit codes; the rules live in
// model, the disk in planfs. main.go only calls Main.
package cli

import (
	"fmt"
	"io"
	"strings"
)

const usage = `usage: fleetwatch [--root DIR]        open the operator's UI on a project
       fleetwatch <command> [flags]

Look:
  demo        open the UI on a throw-away sample project
  board       print the lanes as a kanban (--once) or as JSON (--json)
Workers:
  work-once   claim (or list) the next plan this worker is fit for
  worktree    an agent's git worktree and port: ensure, list, path, remove
Operators:
  promote     move a draft to bugs/ or features/
  park        set a plan aside in ambiguous/ or blocked/
  return      send a parked or claimed plan back to its ready lane
  release     give up a claim; the plan goes back where it came from
  recover     take over a plan whose lease expired or is unreadable
  complete    move a claimed plan to completed/ (or review-needed/)
  scaffold    create a .plans/ tree (and ANCHOR-CONVENTIONS.md)
  check       lint every plan and lease (writes nothing)
  repair      finish or undo what killed workers left half done, as every
              claim does first (--list, board and check only say what it would do)
  orchestrator  show or --set the project's preferred orchestrator
Watchers:
  watch       status, emit, install or uninstall reboot-persistent workers
              (systemd user timers or cron)
  skill       install the /fleet-watch skill for coding agents

Run 'fleetwatch <command> -h' for a command's flags.
`

// Exit codes shared by every command.
const (
	exitOK      = 0
	exitNothing = 1
	exitError   = 2
)

type command func(args []string, stdout, stderr io.Writer) int

var commands = map[string]command{
	"work-once":    runWorkOnce,
	"promote":      runPromote,
	"park":         runPark,
	"return":       runReturn,
	"release":      runRelease,
	"recover":      runRecover,
	"complete":     runComplete,
	"scaffold":     runScaffold,
	"check":        runCheck,
	"repair":       runRepair,
	"board":        runBoard,
	"demo":         runDemo,
	"orchestrator": runOrchestrator,
	"watch":        runWatch,
	"skill":        runSkill,
	"worktree":     runWorktree,
	"demo-agent":   runDemoAgent, // hidden: the demo's stand-in agent
}

// Main runs the command line args (without the program name) and returns
// the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	return run(args, stdout, stderr)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" {
		return runUI(args, stdout, stderr)
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		say(stderr, "unknown command %q (run 'fleetwatch help')", args[0])
		return exitError
	}
	return cmd(args[1:], stdout, stderr)
}
