package config

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// TemplateFor is Template with its integration line turned on, naming
// branch: the branch scaffold asked for or found. "" is Template as it is,
// the default (dev, else develop) holding.
func TemplateFor(branch string) string {
	if branch == "" {
		return Template
	}
	if !plainBranch().MatchString(branch) {
		branch = strconv.Quote(branch) // YAML reads "@x" or "!x" unquoted as something else
	}
	return strings.Replace(Template, "\n#integration: dev\n", "\nintegration: "+branch+"\n", 1)
}

// plainBranch is a branch name YAML reads as that string, unquoted.
var plainBranch = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]*$`) })

// Template is the fleetwatch.yaml `fleetwatch scaffold` writes: every
// setting at its default, commented out. A line "# text" is a note; a line
// "#key: value" (no space after the #) or "#  nested" is a setting: deleting
// its # turns it on, and each section so uncommented is a working example.
const Template = `# fleetwatch.yaml: this project's settings (fleetwatch help landing, workers, claims).
# Commit it: the checks that gate a landing are the ones committed on the
# integration branch. Everything below but the integration branch scaffold chose
# is commented out, so each default holds.
# A line "# text" is a note; delete the # of a "#setting" line to turn it on.

# The branch worktrees start from and finished work lands on (without this
# line: dev, else develop; made from main or master when neither exists).
#integration: dev

# Required checks, run with no shell on each candidate commit before it lands.
#checks:
#  - name: test
#    run: [go, test, ./...]
#    timeout: 10m
#    expect_output: "^ok"        # exit 0 without a match fails ("no tests ran")

# How many queued changes are checked at once: the head and the ones behind it.
#queue:
#  depth: 1

# What each agent's worktree gets besides its checkout, so agents never share
# a backend (fleetwatch help coordinator).
# setup: and teardown: run commands in it, such as createdb.
#worktree:
#  ports: 1
#  env:
#    APP_PORT: "{port}"
#    DATABASE_URL: "postgres:///app_{agent_id}"

# Contain agents and checks in a Landlock domain: auto (where the kernel can),
# require (refuse to run uncontained) or off (fleetwatch help sandbox).
#sandbox: auto

# Hosts contained agents and checks may reach, through the driver's egress
# proxy (HTTPS_PROXY); unset, none: they reach their model through its
# metering proxy and nothing else. open leaves the network open.
#egress: [proxy.golang.org, registry.npmjs.org]

# Where workers claim plans: local lease files, the git remote's lease refs
# (workers on several machines), or etcd (fleetwatch help claims).
#claims:
#  backend: local

# Caps on runs holding a live lease at once, counted across every machine:
# the fleet, each host, endpoint, provider (endpoints.yaml's provider:) and
# tier. A worker under a full cap claims nothing (fleetwatch help workers).
#limits:
#  fleet: 12
#  endpoint: {claude: 3}

# An agent that touches a file outside its approved scope: warn, or stop it
# and park its plan in blocked/.
#on_scope_violation: warn

# Land through pull requests on a forge: one PR per plan in review, checks as
# statuses, an approval on the forge counts (fleetwatch help landing). The
# token stays the driver's: no agent or check gets it.
#forge:
#  kind: gitea                     # gitea (Forgejo too), github or gitlab
#  url: https://git.example.com
#  repo: team/api
#  token_env: FORGE_TOKEN          # or token_file: ~/.config/fleetwatch/forge-token
#  land: auto                      # queue, forge, or auto

# How long a run waits for a person's answer to its question (or for a note
# after an interrupt) before its plan is parked in blocked/ (fleetwatch help
# workers).
#wait_for_answer: 30m
`
