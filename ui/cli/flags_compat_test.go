package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// The command line is a contract with scripts, timers and anchor's users:
// these tests record every flag every command accepts, and the exit codes and
// one-line errors, so the CLI can be rebuilt without breaking a caller.

// flagCase is one call of a command with one of its flags.
type flagCase struct {
	path  []string // the command, e.g. {"watch", "emit"}
	flag  []string // the flag and its value, e.g. {"--bin", "/x"}
	extra []string // positionals that stop the command after its flags parse
}

// flagTable lists each command with every flag it accepts. Commands run in
// an empty folder (no .plans/, no git) or get a stray argument, so nothing
// acts: each call only has to get past flag parsing.
func flagTable(empty string) []flagCase {
	var cs []flagCase
	add := func(path []string, extra []string, flags ...[]string) {
		for _, f := range flags {
			cs = append(cs, flagCase{path, f, extra})
		}
	}
	root := []string{"--root", empty}
	actor := [][]string{root, {"--agent-id", "op-1"}, {"--token", "tok"}}
	withForce := append(append([][]string{}, actor...), []string{"--force"})
	add(nil, nil, root, []string{"--agent-id", "op-1"}, []string{"--lease-ttl", "60"})
	add([]string{"work-once"}, nil, append(withForce,
		[]string{"--list"}, []string{"--list", "--json"}, []string{"--once"}, []string{"--max-plans", "2"},
		[]string{"--tier", "mid"}, []string{"--model", "m"}, []string{"--endpoint", "e"},
		[]string{"--registry", filepath.Join(empty, "endpoints.yaml")}, []string{"--lease-ttl", "60"},
		[]string{"--no-fit-check"}, []string{"--no-dep-check"}, []string{"--allow-assigned"},
		[]string{"--slug", "a"}, []string{"--path", "features/a.md"}, []string{"--run"},
		[]string{"--release", "in-progress/a.md"}, []string{"--heartbeat", "in-progress/a.md"},
		[]string{"--recover"}, []string{"--park", "blocked"}, []string{"--return-ready"},
		[]string{"--target-lane", "bugs"}, []string{"--ensure-worktree"}, []string{"--stop-grace", "3s"},
		[]string{"--port-range", "4100-4199"}, []string{"--print-only"}, []string{"--claims", "local"})...)
	add([]string{"promote"}, []string{"a"}, append(withForce, []string{"--to", "bugs"})...)
	add([]string{"park"}, []string{"a"}, append(withForce, []string{"--to", "blocked"}, []string{"--reason", "why"})...)
	add([]string{"return"}, []string{"a"}, append(withForce, []string{"--to", "features"})...)
	add([]string{"release"}, []string{"a"}, withForce...)
	add([]string{"recover"}, []string{"a"}, append(actor, []string{"--lease-ttl", "60"})...)
	add([]string{"complete"}, []string{"a"}, append(withForce, []string{"--to", "review-needed"})...)
	add([]string{"new"}, []string{"a"}, root, []string{"--agent-id", "op-1"}, []string{"--lane", "drafts"},
		[]string{"--title", "A"}, []string{"--value", "high"}, []string{"--priority", "P1"}, []string{"--models", "mid"},
		[]string{"--depends", "b"}, []string{"--local"}, []string{"--no-edit"})
	add([]string{"check"}, nil, root, []string{"--json"})
	add([]string{"repair"}, nil, root)
	add([]string{"board"}, nil, root, []string{"--project", empty}, []string{"--once"}, []string{"--json"},
		[]string{"--include-parked"}, []string{"--no-color"}, []string{"--width", "80"})
	stray := []string{"stray"}
	add([]string{"demo"}, stray, []string{"--agent-id", "op-1"}, []string{"--lease-ttl", "60"}, []string{"--keep"}, root)
	add([]string{"scaffold"}, []string{empty, "stray"}, root)
	registry := []string{"--registry", filepath.Join(empty, "endpoints.yaml")}
	add([]string{"agents"}, []string{"a", "b"}, root, registry)
	add([]string{"usage"}, stray, root, []string{"--by", "tier"}, []string{"--since", "7d"}, []string{"--json"})
	for _, v := range []string{"pause", "resume", "stop"} {
		add([]string{"worker", v}, []string{"w1"}, root)
	}
	add([]string{"tell"}, []string{"w1", "a note"}, root, []string{"--host", "elsewhere"})
	add([]string{"interrupt"}, []string{"w1"}, root, []string{"--host", "elsewhere"})
	add([]string{"ask"}, []string{"which?"}, root)
	add([]string{"answer"}, []string{"w1", "yes"}, root, []string{"--host", "elsewhere"}, []string{"--ask", "a1"})
	add([]string{"report"}, stray, root, []string{"--by", "model"}, []string{"--since", "7d"}, []string{"--json"})
	add([]string{"budget", "show"}, stray, root)
	add([]string{"endpoints", "show"}, stray, root)
	add([]string{"endpoints", "clear"}, []string{"a"}, root)
	add([]string{"notify", "test"}, stray, root, []string{"--to", "team"})
	add([]string{"notify", "watch"}, stray, root, []string{"--every", "1m"}, []string{"--claims", "local"})
	add([]string{"notify", "log"}, stray, root, []string{"--last", "5"}, []string{"-n", "5"})
	add([]string{"budget", "extend"}, []string{"a"}, root, []string{"--by", "1M"}, []string{"--agent-id", "op-1"})
	add([]string{"doctor"}, stray, root, registry)
	add([]string{"demo-agent"}, []string{"a", "b"}, []string{"--pace", "1s"})
	project := [][]string{root, {"--project", empty}}
	add([]string{"orchestrator"}, stray, append(project, []string{"--set", "claude:opus"})...)
	workerFlags := [][]string{{"--worker", "agent=a,tier=mid"}, {"--bin", "/bin/true"}}
	add([]string{"watch", "status"}, nil, project...)
	add([]string{"watch", "emit"}, []string{"cron"}, append(project, workerFlags...)...)
	add([]string{"watch", "install"}, stray, append(append(project, workerFlags...), []string{"--yes"}, []string{"--dry-run"})...)
	add([]string{"watch", "uninstall"}, stray, append(project, []string{"--agent", "a"}, []string{"--dry-run"})...)
	add([]string{"skill", "install"}, stray, append(project, []string{"--yes"}, []string{"--dry-run"})...)
	gitProject := []string{"--project", empty}
	agent := []string{"--agent-id", "a"}
	for _, sub := range []string{"ensure", "list", "path", "remove", "ensure-integration"} {
		add([]string{"worktree", sub}, nil, root)
	}
	add([]string{"worktree", "ensure"}, nil, gitProject, agent, []string{"--slug", "s"}, []string{"--push-integration"}, []string{"--port-range", "4100-4199"})
	add([]string{"worktree", "list"}, nil, gitProject)
	add([]string{"worktree", "path"}, nil, gitProject, agent)
	add([]string{"worktree", "remove"}, nil, gitProject, agent, []string{"--force"}, []string{"--delete-branch"})
	add([]string{"worktree", "ensure-integration"}, nil, gitProject, []string{"--push-integration"})
	add([]string{"review"}, []string{"a", "b"}, root, []string{"--approve"}, []string{"--needs-work", "n"}, []string{"--defer", "n"},
		[]string{"--peer"}, []string{"--endpoint", "e"}, []string{"--agent-id", "r"},
		[]string{"--registry", filepath.Join(empty, "endpoints.yaml")}, []string{"--timeout", "1m"})
	opAgent := []string{"--agent-id", "op-1"}
	add([]string{"queue", "add"}, []string{"a"}, root, opAgent, []string{"--hotfix"})
	add([]string{"queue", "run"}, nil, root, opAgent, []string{"--ungated"})
	add([]string{"queue", "remove"}, []string{"a"}, root, opAgent)
	add([]string{"queue", "list"}, nil, root, []string{"--json"})
	add([]string{"queue", "land"}, nil, root, opAgent, []string{"--yes"}, []string{"--ungated"})
	add([]string{"queue", "send-back"}, []string{"a"}, root, opAgent, []string{"--note", "n"})
	add([]string{"queue", "accept"}, nil, root, opAgent)
	add([]string{"queue", "sync"}, nil, root)
	add([]string{"serve"}, stray, root, []string{"--listen", "127.0.0.1:0"}, []string{"--authorized-keys", "k"},
		[]string{"--viewers", "v"}, []string{"--host-key", "h"}, []string{"--max-sessions", "9"},
		[]string{"--max-sessions-per-key", "3"}, []string{"--login-timeout", "20s"}, []string{"--login-idle", "5s"},
		[]string{"--max-session-length", "8h"})
	add([]string{"inbox"}, stray, root, []string{"--json"})
	add([]string{"approve"}, []string{"a", "b"}, root, opAgent, []string{"--edit"})
	add([]string{"reject"}, []string{"a", "b"}, root, opAgent, []string{"--note", "n"})
	return cs
}

// flagRejected reports whether stderr says a flag was not understood.
func flagRejected(stderr string) bool {
	for _, s := range []string{"not defined", "unknown flag", "unknown shorthand", "needs an argument", "invalid value", "invalid argument", "bad flag syntax"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// Every flag of every command is still accepted, before and after the
// positional arguments. One call per command holds all of its flags (a
// rejected one is named in the error), so the check stays cheap under -race.
func TestEveryFlagAccepted(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	home := t.TempDir() // skill and watch never touch the tester's own config
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home}
	type call struct{ path, flags, extra []string }
	var calls []*call
	byPath := map[string]*call{}
	for _, c := range flagTable(empty) {
		k := strings.Join(c.path, " ")
		if byPath[k] == nil {
			byPath[k] = &call{path: c.path, extra: c.extra}
			calls = append(calls, byPath[k])
		}
		byPath[k].flags = append(byPath[k].flags, c.flag...)
	}
	for _, c := range calls {
		orders := [][]string{append(append(append([]string{}, c.path...), c.flags...), c.extra...)}
		if len(c.extra) > 0 {
			orders = append(orders, append(append(append([]string{}, c.path...), c.extra...), c.flags...))
		}
		for _, args := range orders {
			r := fwtest.RunEnv(t, empty, env, args...)
			if flagRejected(r.Stderr) || r.Code < 0 || r.Code > 2 {
				t.Errorf("fleetwatch %s: flag rejected: %v", strings.Join(args, " "), r)
			}
			if r.Stderr != "" && (!strings.HasPrefix(r.Stderr, "fleetwatch: ") || strings.Count(r.Stderr, "\n") != 1) && !strings.Contains(r.Stderr, "usage:") {
				t.Errorf("fleetwatch %s: want one `fleetwatch: ` line, got %q", strings.Join(args, " "), r.Stderr)
			}
		}
	}
}

// Each command's -h is exit 0 on stdout and names every flag it takes.
func TestEveryHelpNamesItsFlags(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	flags := map[string][]string{}
	var order []string
	for _, c := range flagTable(empty) {
		k := strings.Join(c.path, " ")
		if _, ok := flags[k]; !ok {
			order = append(order, k)
		}
		flags[k] = append(flags[k], c.flag[0])
	}
	for _, k := range order {
		if k == "" {
			continue // the top level's -h lists the commands (below)
		}
		args := append(strings.Fields(k), "-h")
		r := fwtest.Run(t, empty, args...)
		if r.Code != exitOK || r.Stderr != "" {
			t.Errorf("fleetwatch %s -h: %v", k, r)
			continue
		}
		if !strings.Contains(r.Stdout, "usage: fleetwatch") {
			t.Errorf("fleetwatch %s -h: no usage line:\n%s", k, r.Stdout)
		}
		for _, f := range flags[k] {
			// Go's flag printed "-name", pflag prints "--name": both hold "-name".
			if !strings.Contains(r.Stdout, f[1:]+" ") && !strings.Contains(r.Stdout, f[1:]+"\n") && !strings.Contains(r.Stdout, f[1:]+"=") {
				t.Errorf("fleetwatch %s -h does not name %s:\n%s", k, f, r.Stdout)
			}
		}
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"watch", "-h"}, {"worktree", "--help"}, {"skill", "-h"}} {
		if r := fwtest.Run(t, empty, args...); r.Code != exitOK || !strings.Contains(r.Stdout, "usage: fleetwatch") {
			t.Errorf("fleetwatch %s: %v", strings.Join(args, " "), r)
		}
	}
	r := fwtest.Run(t, empty, "-h")
	for _, c := range newRoot().Commands() {
		if name := c.Name(); !c.Hidden && !strings.Contains(r.Stdout, name) {
			t.Errorf("fleetwatch -h does not list %s:\n%s", name, r.Stdout)
		}
	}
}

// A bad flag is exit 2 with one `fleetwatch: ` line naming it and the
// command's -h; so is an unknown command.
func TestBadFlagOneLine(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	paths := [][]string{nil}
	seen := map[string]bool{}
	for _, c := range flagTable(empty) {
		if k := strings.Join(c.path, " "); !seen[k] && len(c.path) > 0 {
			seen[k] = true
			paths = append(paths, c.path)
		}
	}
	for i, p := range paths {
		bads := []string{"--bogus-flag"}
		if i < 3 { // the other spellings on a few commands
			bads = append(bads, "-bogus-flag", "--bogus-flag=1")
		}
		for _, bad := range bads {
			args := append(append([]string{}, p...), bad)
			r := fwtest.Run(t, empty, args...)
			fwtest.OneLineError(t, r, "bogus-flag")
			if strings.Count(r.Stderr, "fleetwatch: ") != 1 {
				t.Errorf("fleetwatch %s: prefix twice: %q", strings.Join(args, " "), r.Stderr)
			}
			if len(p) > 0 && !strings.Contains(r.Stderr, "fleetwatch "+strings.Join(p, " ")+" -h") {
				t.Errorf("fleetwatch %s: no hint at the command's -h: %q", strings.Join(args, " "), r.Stderr)
			}
		}
	}
	// A flag that wants a value and has none.
	fwtest.OneLineError(t, fwtest.Run(t, empty, "work-once", "--max-plans"), "max-plans")
	// A claims backend this tree cannot use: one line naming the flag, exit 2.
	claimsTree := fwtest.NewTree(t)
	fwtest.OneLineError(t, fwtest.Run(t, empty, "work-once", "--root", claimsTree, "--claims", "nfs"), "--claims")
	fwtest.OneLineError(t, fwtest.Run(t, empty, "work-once", "--root", claimsTree, "--claims", "git", "--list"), "--claims git")
	fwtest.OneLineError(t, fwtest.Run(t, empty, "board", "--width", "wide"), "width")
	for _, args := range [][]string{{"frobnicate"}, {"--root", empty, "frobnicate"}, {"watch", "frobnicate"}, {"worktree", "frobnicate"}, {"skill", "frobnicate"}} {
		fwtest.OneLineError(t, fwtest.Run(t, empty, args...), "frobnicate")
	}
	// watch and worktree alone print their usage on stderr, exit 2.
	for _, c := range []string{"watch", "worktree"} {
		if r := fwtest.Run(t, empty, c); r.Code != exitError || !strings.Contains(r.Stderr, "usage: fleetwatch "+c) {
			t.Errorf("fleetwatch %s: %v", c, r)
		}
	}
}

// Exit 0 ok, 1 nothing to do, 2 error; flags may follow the positionals.
func TestExitCodesAndInterspersedFlags(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "drafts/a.md", Fields: "Priority: P1;Preferred models: any"}, fwtest.Plan{Rel: "features/b.md", Fields: "Priority: P2"})
	other := t.TempDir()
	if r := fwtest.Run(t, other, "check", "--root", dir); r.Code != exitOK {
		t.Errorf("check: %v", r)
	}
	if r := fwtest.Run(t, other, "repair", "--root", dir); r.Code != exitNothing {
		t.Errorf("repair with nothing to repair: %v", r)
	}
	if r := fwtest.Run(t, other, "promote", "a", "--root", dir, "--to", "features"); r.Code != exitOK || !fwtest.Exists(dir, "features/a.md") {
		t.Fatalf("promote SLUG --root R --to L: %v", r)
	}
	if r := fwtest.Run(t, other, "work-once", "--root", dir, "--agent-id", "w1", "--slug", "b"); r.Code != exitOK || !fwtest.Exists(dir, "in-progress/b.md") {
		t.Fatalf("work-once: %v", r)
	}
	r := fwtest.Run(t, other, "release", "b", "--root", dir, "--agent-id", "someone-else")
	fwtest.OneLineError(t, r, "--force")
	if r := fwtest.Run(t, other, "release", "b", "--root", dir, "--agent-id", "someone-else", "--force"); r.Code != exitOK || !fwtest.Exists(dir, "features/b.md") {
		t.Fatalf("release REL --root R --force: %v", r)
	}
	if r := fwtest.Run(t, other, "work-once", "--root", dir, "--slug", "nope"); r.Code != exitNothing {
		t.Errorf("work-once with nothing to do: %v", r)
	}
	fwtest.OneLineError(t, fwtest.Run(t, other, "check", "--root", t.TempDir()), ".plans")
	// Bare fleetwatch [--root DIR] opens the UI (which needs a terminal).
	if r := fwtest.Run(t, other, "--root", dir); r.Code != exitError || !strings.Contains(r.Stderr, "needs a terminal") {
		t.Errorf("fleetwatch --root DIR: %v", r)
	}
}

// Go's flag package took single-dash long flags (-once); they still work.
func TestSingleDashLongFlags(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/b.md", Fields: "Priority: P2"})
	if r := fwtest.Run(t, t.TempDir(), "board", "-once", "-root", dir, "-no-color"); r.Code != exitOK || !strings.Contains(r.Stdout, "b") {
		t.Errorf("board -once -root DIR: %v", r)
	}
	if r := fwtest.Run(t, t.TempDir(), "work-once", "-list", "-json", "-root="+dir); r.Code != exitOK || !strings.Contains(r.Stdout, "features/b.md") {
		t.Errorf("work-once -list -json -root=DIR: %v", r)
	}
	// A value that starts with a dash stays a value.
	if r := fwtest.Run(t, t.TempDir(), "park", "b", "-root", dir, "-to", "blocked", "-reason", "-once"); r.Code != exitOK || !fwtest.Exists(dir, "blocked/b.md") {
		t.Errorf("park -reason -once: %v", r)
	}
}

// --worker is one worker per flag: the commas belong to its value.
func TestWorkerFlagRepeats(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	r := fwtest.Run(t, dir, "watch", "emit", "cron", "--root", dir, "--bin", fwtest.Exe(t), "--worker", "agent=a-1,tier=mid", "--worker", "agent=b-1,tier=small,interval=10m")
	if r.Code != exitOK || !strings.Contains(r.Stdout, "a-1") || !strings.Contains(r.Stdout, "b-1") || !strings.Contains(r.Stdout, "*/10") {
		t.Fatalf("emit with two --worker: %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, ".plans")); err != nil {
		t.Fatal(err)
	}
}

// Every command takes --root; scaffold takes it as its folder.
func TestEveryCommandTakesRoot(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	seen := map[string]bool{}
	for _, c := range flagTable(empty) {
		if c.flag[0] == "--root" {
			seen[strings.Join(c.path, " ")] = true
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" || sub.Hidden {
				continue
			}
			if sub.HasSubCommands() {
				walk(sub)
				continue
			}
			path := strings.TrimPrefix(sub.CommandPath(), "fleetwatch ")
			if sub.Flags().Lookup("root") == nil {
				t.Errorf("%s has no --root", path)
			}
			if !seen[path] {
				t.Errorf("%s: --root is not in flagTable", path)
			}
		}
	}
	walk(newRoot())
	dir := filepath.Join(t.TempDir(), "p")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := fwtest.Run(t, t.TempDir(), "scaffold", "--root", dir); r.Code != exitOK || !fwtest.Exists(dir, "drafts") {
		t.Fatalf("scaffold --root DIR: %v", r)
	}
	fwtest.OneLineError(t, fwtest.Run(t, t.TempDir(), "scaffold", "--root", dir, "elsewhere"), "--root")
}

// cobra's faces: --version, help CMD and shell completions.
func TestVersionHelpCompletion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"--version"}, {"-version"}} {
		r := fwtest.Run(t, dir, args...)
		if r.Code != exitOK || !strings.HasPrefix(r.Stdout, "fleetwatch ") || strings.Count(r.Stdout, "\n") != 1 || r.Stderr != "" {
			t.Errorf("fleetwatch %s: %v", args[0], r)
		}
		if v := strings.TrimSpace(strings.TrimPrefix(r.Stdout, "fleetwatch ")); v == "" {
			t.Errorf("fleetwatch %s: no version: %q", args[0], r.Stdout)
		}
	}
	r := fwtest.Run(t, dir, "help", "work-once")
	if r.Code != exitOK || !strings.Contains(r.Stdout, "usage: fleetwatch work-once") || !strings.Contains(r.Stdout, "--max-plans") {
		t.Errorf("help work-once: %v", r)
	}
	if r := fwtest.Run(t, dir, "help", "watch", "emit"); r.Code != exitOK || !strings.Contains(r.Stdout, "--worker") {
		t.Errorf("help watch emit: %v", r)
	}
	for sh, marker := range map[string]string{"bash": "complete", "zsh": "compdef", "fish": "complete -c fleetwatch"} {
		if r := fwtest.Run(t, dir, "completion", sh); r.Code != exitOK || !strings.Contains(r.Stdout, marker) {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", sh, r.Code, len(r.Stdout), r.Stderr)
		}
	}
	fwtest.OneLineError(t, fwtest.Run(t, dir, "completion", "tcsh"), "tcsh")
	fwtest.OneLineError(t, fwtest.Run(t, dir, "help", "frobnicate"), "frobnicate")
}
