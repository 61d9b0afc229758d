package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// helpText is each command's description and examples, by its path below
// fleetwatch; a command that sets its own keeps them. The manual's pages
// (fleetwatch help TOPIC) say the rest.
var helpTexts = map[string]struct{ long, example string }{
	"": {"", `  fleetwatch                          # the cockpit on the project here
  fleetwatch --root ~/api --root ~/web  # several projects in one cockpit (fleetwatch help ui)
  fleetwatch help plans               # the manual's page on plans`},
	"demo": {`Opens the cockpit on a sample project in a temporary folder: a git repository with
plans in every lane, a stand-in agent and workers you can spawn (4, then s). The
folder goes when the UI closes, unless --keep or --root.`,
		`  fleetwatch demo
  fleetwatch demo --keep              # print where the sample project stays`},
	"board": {`Prints the lanes as a kanban, like anchor's plan_board: one frame with --once,
else a new frame whenever the tree changes; --json has every plan's rank per tier.`,
		`  fleetwatch board --once --width 120
  fleetwatch board --json | jq '.lanes'`},
	"serve": {`Serves the cockpit over SSH to the operators in --authorized-keys and the
read-only viewers in --viewers; no shell account is needed (fleetwatch help serve).`,
		`  fleetwatch serve --authorized-keys ~/.ssh/fleet_operators --listen 0.0.0.0:2222
  fleetwatch serve --root ~/api --root ~/web --authorized-keys ops   # projects="api" on a key's line: only api`},
	"work-once": {`One worker's turn: claims the next plan this worker is fit for (tier, model,
dependencies) under a lease, or lists what it would take with --list. With --run it
hands the plan to the endpoint's agent and keeps its lease alive while it works.
Exit 0 claimed or worked, 1 nothing to do, 2 an error (fleetwatch help work-once).`,
		`  fleetwatch work-once --list --tier mid
  fleetwatch work-once --run --ensure-worktree --endpoint claude --agent-id mid-1`},
	"worktree": {"", `  fleetwatch worktree list
  fleetwatch worktree ensure --agent-id mid-1 --slug fix-login`},
	"worktree ensure": {`Gives an agent its git worktree var/worktrees/<agent> (on feature/<slug> with
--slug) and its port, and prints WORKTREE=, BRANCH=, INTEGRATION= and PORT=.`,
		`  fleetwatch worktree ensure --agent-id mid-1 --slug fix-login`},
	"worktree list": {`Lists every agent's worktree: its branch, port, and clean or dirty.`,
		`  fleetwatch worktree list`},
	"worktree path": {`Prints an agent's worktree folder, for scripts.`,
		`  cd "$(fleetwatch worktree path --agent-id mid-1)"`},
	"worktree remove": {`Removes an agent's worktree; it refuses while the worktree holds uncommitted
changes or commits the integration branch lacks, unless --force (the branch stays).`,
		`  fleetwatch worktree remove --agent-id mid-1 --delete-branch`},
	"worktree ensure-integration": {`Finds the integration branch (dev, else develop), or creates dev from main or
master; --push-integration pushes it when origin lacks it.`,
		`  fleetwatch worktree ensure-integration --push-integration`},
	"new": {"", `  fleetwatch new fix-login --lane bugs --models mid --priority P1
  fleetwatch new fix-login --lane bugs --models mid --no-edit --goal "Logins survive 3G" --done-when "a login on 3G succeeds"
  fleetwatch new idea --no-edit       # a draft, not opened in $EDITOR`},
	"promote": {`Moves a draft to a ready lane, where workers pick it; a draft without Preferred
models or a "## Done when" section is refused unless --force.`,
		`  fleetwatch promote fix-login --to bugs`},
	"park": {`Sets a ready or claimed plan aside in ambiguous/ (unclear) or blocked/ (cannot
proceed), with the reason in the event log.`,
		`  fleetwatch park fix-login --to blocked --reason "waits for the API key"`},
	"return": {`Sends a parked or claimed plan back to the ready lane it came from (or --to).`,
		`  fleetwatch return fix-login`},
	"release": {`Gives up a claim: the plan goes back to the lane it was claimed from and its
lease is removed. Another agent's claim needs --force.`,
		`  fleetwatch release in-progress/fix-login.md --force`},
	"recover": {`Takes over a plan whose lease expired or cannot be read, or removes a lease
whose plan is gone; then release or complete it.`,
		`  fleetwatch recover fix-login && fleetwatch release fix-login`},
	"complete": {`The plan's holder moves it to completed/ (or review-needed/ with --to).`,
		`  fleetwatch complete fix-login --to review-needed`},
	"check": {`Lints every plan and lease and the landing settings; writes nothing. Exit 1
when it finds problems, each one line naming the file.`,
		`  fleetwatch check
  fleetwatch check --json`},
	"repair": {`Makes the repairs every claim starts with: half-done claims, left-over
leases, twin links. Exit 1 when there was nothing to do.`,
		`  fleetwatch repair`},
	"orchestrator": {`Shows the project's preferred orchestrator, from ANCHOR-CONVENTIONS.md, or
records one with --set; it approves plan-first proposals (fleetwatch help coordinator).`,
		`  fleetwatch orchestrator --set claude:opus`},
	"review": {`A person's decision on a change in review-needed/: --approve its tip commit,
--needs-work or --defer with a note; or --peer, another worker's read-only review
of the tip (fleetwatch help landing).`,
		`  fleetwatch review fix-login --approve
  fleetwatch review fix-login --needs-work "the timeout is still 5s on 3G"
  fleetwatch review fix-login --peer --endpoint claude`},
	"queue": {"", `  fleetwatch queue add fix-login
  fleetwatch queue land`},
	"queue add": {`Appends an approved change to the merge queue (var/fleet/queue/queue.json).`,
		`  fleetwatch queue add fix-login`},
	"queue remove": {`Takes a change out of the merge queue; its approval stands.`,
		`  fleetwatch queue remove fix-login`},
	"queue list": {`Lists the queue and every candidate with its state and checks.`,
		`  fleetwatch queue list
  fleetwatch queue list --json`},
	"queue land": {`Lands the head of the queue: builds it on the integration branch's tip, runs
the checks unless they passed on that exact tree, and moves the branch by
compare-and-swap, asking first and naming the commit; --ungated where no checks
are configured.`,
		`  fleetwatch queue land
  fleetwatch queue land --yes         # in scripts`},
	"queue send-back": {`Returns a queued change to its worker's lane with a note (or its conflict);
its approval is void, and the next worker to claim the plan gets the branch.`,
		`  fleetwatch queue send-back fix-login --note "the check fails on 32-bit"`},
	"inbox":   {"", `  fleetwatch inbox --json`},
	"approve": {"", `  fleetwatch approve add-export`},
	"reject":  {"", `  fleetwatch reject add-export --note "keep the CSV writer out of main.go"`},
	"watch": {"", `  fleetwatch watch install --worker agent=mid-1,tier=mid,run=1
  fleetwatch watch status`},
	"watch status": {`Shows what is there and what would run: the lanes, each tier's next pick, the
orchestrator, the installed timers, linger, and each worker's last run.`,
		`  fleetwatch watch status`},
	"watch emit": {`Prints the systemd units or crontab lines watch install would write, for a
system of your own.`,
		`  fleetwatch watch emit cron --worker agent=small-1,tier=small,interval=10m`},
	"watch install": {`Installs a systemd user timer per --worker, each running work-once on its
schedule, so workers survive a reboot (watch emit cron prints crontab lines instead).`,
		`  fleetwatch watch install --worker agent=mid-1,tier=mid,run=1 --dry-run`},
	"watch uninstall": {`Removes the project's watchers (or only --agent's).`,
		`  fleetwatch watch uninstall --agent mid-1`},
	"skill":         {"", `  fleetwatch skill install --dry-run`},
	"skill install": {"", `  fleetwatch skill install --yes`},
	"completion":    {"", `  source <(fleetwatch completion bash)`},
}

// describe gives every command below root the description and examples
// helpTexts holds for it, where it has none of its own.
func describe(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), root.Name()), " ")
		if h, ok := helpTexts[path]; ok {
			if c.Long == "" {
				c.Long = h.long
			}
			if c.Example == "" {
				c.Example = h.example
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}
