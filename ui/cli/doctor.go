package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/egress"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

const doctorLong = `Says what this machine has and lacks for each feature, one line each, and
reads the project's fleetwatch.yaml and endpoints.yaml as workers will:

  ok    works here
  --    missing, but nothing configured here needs it
  FAIL  something configured cannot work (exit 1)

It writes nothing to the project.

With --live it also runs each endpoint's real agent CLI (agent: in
endpoints.yaml) as a worker would, contained, in a throwaway repository,
against a scripted model API built into fleetwatch on loopback: the CLI must
start, edit and commit with its shell tool, be metered exactly and exit 0. It
takes seconds, spends no tokens (the CLI's key variable holds a placeholder),
and says exactly what failed otherwise.`

const doctorExample = `  fleetwatch doctor
  fleetwatch doctor --live                 # each preset endpoint's real CLI, against a scripted API
  fleetwatch doctor --live --endpoint cc
  fleetwatch doctor --root ~/src/shop`

// minGit is the oldest git the merge queue works with: it builds
// candidates with merge-tree --write-tree.
var minGit = [2]int{2, 38}

// finding is one line of doctor: a state word and what it means.
type finding struct{ state, text string }

const (
	fOK   = "ok"
	fNone = "--"
	fFail = "FAIL"
)

func doctorCmd() *cobra.Command {
	cmd := leaf("doctor", "what this machine has and lacks for each feature; exit 1 when something configured cannot work", func(fs *pflag.FlagSet) body {
		var root, reg, only string
		var live bool
		rootFlag(fs, &root, rootHelp)
		fs.StringVar(&reg, "registry", "", "endpoints.yaml (default: <root>/endpoints.yaml)")
		fs.BoolVar(&live, "live", false, "also run each preset endpoint's real CLI, contained, against a built-in scripted model API in a throwaway repository (no token spent)")
		fs.StringVar(&only, "endpoint", "", "with --live: only this endpoint")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 0 {
				return fail(stderr, exitError, "doctor: takes no arguments, got %q", pos[0])
			}
			if only != "" && !live {
				return fail(stderr, exitError, "doctor: --endpoint goes with --live")
			}
			project := findRoot(root)
			regPath := cmp.Or(reg, registry.Path(project))
			findings := diagnose(project, regPath)
			if live {
				findings = append(findings, liveFindings(regPath, only)...)
			}
			code := exitOK
			for _, f := range findings {
				fmt.Fprintf(stdout, "%-5s %s\n", f.state, f.text)
				if f.state == fFail {
					code = exitNothing
				}
			}
			return code
		}
	})
	cmd.Long, cmd.Example = doctorLong, doctorExample
	return cmd
}

// diagnose is every line of doctor for project, machine first.
func diagnose(project, regPath string) []finding {
	out := []finding{gitFinding(), {fOK, "tmux: not needed (the cockpit runs in any terminal, over SSH too)"}}
	settings, err := config.Load(project)
	if err != nil {
		out = append(out, finding{fFail, err.Error()})
	}
	out = append(out, sandboxFinding(settings.Sandbox), networkFinding(settings), devicesFinding(settings.Sandbox), userFinding(), cgroupFinding(), sshFinding(), watchFinding())
	out = append(out, claimsFinding(project, settings)...)
	out = append(out, forgeFindings(project, settings)...)
	return append(out, agentFindings(project, regPath)...)
}

// forgeFindings are the forge's lines (landing.ForgeDoctor).
func forgeFindings(project string, s config.Settings) []finding {
	var out []finding
	for _, l := range landing.ForgeDoctor(project, s) {
		state := fOK
		switch {
		case l.Fail:
			state = fFail
		case l.None:
			state = fNone
		}
		out = append(out, finding{state, termtext.Line(l.Text)})
	}
	return out
}

func gitFinding() finding {
	r, err := gitenv.Run(context.Background(), gitenv.Call{Args: []string{"version"}, Timeout: 10 * time.Second})
	if err != nil {
		return finding{fFail, "git: not found or not working (" + err.Error() + "): fleetwatch needs git " + gitWant()}
	}
	ver := strings.TrimPrefix(r.Text(), "git version ")
	if !gitAtLeast(ver, minGit) {
		return finding{fFail, "git " + ver + ": the merge queue needs " + gitWant() + " (merge-tree --write-tree)"}
	}
	return finding{fOK, "git " + ver + ": worktrees and the merge queue (needs " + gitWant() + ")"}
}

func gitWant() string { return fmt.Sprintf("%d.%d or newer", minGit[0], minGit[1]) }

// gitAtLeast compares "2.43.0" (or "2.39.2.windows.1") with want.
func gitAtLeast(ver string, want [2]int) bool {
	parts := strings.SplitN(ver, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > want[0] || major == want[0] && minor >= want[1]
}

func sandboxFinding(m sandbox.Mode) finding {
	contained, line, err := sandbox.Status(m)
	switch {
	case err != nil:
		return finding{fFail, "sandbox: " + err.Error() + " (fleetwatch help sandbox)"}
	case !contained:
		return finding{fNone, "sandbox: " + line + " (fleetwatch help sandbox)"}
	}
	return finding{fOK, "sandbox: " + line}
}

// networkFinding says whether contained agents and checks connect only
// through the driver (Landlock's TCP rules and the egress proxy).
func networkFinding(s config.Settings) finding {
	contained, closed, _, err := egress.Status(s.Sandbox, s.Egress)
	switch {
	case err != nil || !contained:
		return finding{fNone, "network: open, as agents are not contained"}
	case !closed:
		return finding{fNone, "network: open (" + egress.OpenBecause(s.Egress) + "): agents and checks connect anywhere (fleetwatch help sandbox)"}
	}
	return finding{fOK, "network: TCP only to the driver's ports: its metering proxy, the agent's own port and the egress proxy (" + egress.Allowed(s.Egress) + ")"}
}

// devicesFinding says what keeps agents from terminals and devices.
func devicesFinding(m sandbox.Mode) finding {
	alone := "agents, turns and checks start in a session of their own with no terminal and no capability"
	if !sandbox.DropsCapabilities {
		alone = "agents, turns and checks start in a session of their own with no terminal"
	}
	abi, err := sandbox.ABI()
	switch {
	case m == sandbox.Off || err != nil:
		return finding{fNone, "devices: " + alone + ", but without Landlock they may write any device the user can"}
	case abi < 5:
		return finding{fNone, fmt.Sprintf("devices: %s, and make none (Landlock); ioctl on devices needs Landlock ABI 5, this kernel has %d", alone, abi)}
	}
	return finding{fOK, "devices: " + alone + "; they make none, write only /dev/null-like ones and ioctl none (Landlock)"}
}

// userFinding says whom agents run as, and what that holds.
func userFinding() finding {
	if os.Geteuid() == 0 && !sandbox.DropsCapabilities {
		return finding{fNone, "user: root: agents run as root with every privilege (this system has no capabilities to drop)"}
	}
	if os.Geteuid() == 0 {
		return finding{fOK, "user: root: agents keep uid 0 (their files stay theirs) but hold no capability, bounding set included, and gain none from a setuid program"}
	}
	if !sandbox.DropsCapabilities {
		return finding{fOK, fmt.Sprintf("user: uid %d: agents run as it", os.Geteuid())}
	}
	return finding{fOK, fmt.Sprintf("user: uid %d: agents run as it, with no capability", os.Geteuid())}
}

// cgroupFinding makes and removes an empty cgroup, as a driver does for
// each run: the one sure way to know it may, and what it holds.
func cgroupFinding() finding {
	g, err := sandbox.NewGroup(sandbox.GroupName("doctor", strconv.Itoa(os.Getpid())), sandbox.DefaultLimits())
	if err != nil {
		return finding{fNone, "cgroups: none delegated (" + err.Error() + "): what an agent leaves running is stopped by process group instead, a pause stops its process group only, and no process or memory limit holds"}
	}
	defer g.Close()
	if !g.Bounded() {
		return finding{fNone, "cgroups: " + g.Held() + "; not here: " + g.Unbounded() + " (no such controller in cgroup v2 or v1 that this user may use)"}
	}
	return finding{fOK, "cgroups: each run's whole: " + g.Held()}
}

func sshFinding() finding {
	if p, err := exec.LookPath("ssh"); err == nil {
		return finding{fOK, "serve: ssh client " + p + " (serve is its own SSH server; operators connect with any client)"}
	}
	return finding{fNone, "serve: no ssh client here (serve is its own SSH server; operators connect from their machines)"}
}

func watchFinding() finding {
	for _, prog := range []string{"systemctl", "crontab"} {
		if p, err := exec.LookPath(prog); err == nil {
			return finding{fOK, "watch: " + p + " runs watchers that survive a reboot"}
		}
	}
	return finding{fNone, "watch: neither systemctl nor crontab: run workers by hand or from another scheduler"}
}

// claimsFinding is what the claims backend's description finds on this
// machine (the git backend: is its remote here).
func claimsFinding(project string, s config.Settings) []finding {
	if s.Claims.Backend == "" || s.Claims.Backend == claims.LocalName {
		return []finding{{fOK, "claims: local lease files (one machine)"}}
	}
	if err := checkClaimsSection(project, s); err != nil {
		return []finding{{fFail, err.Error()}}
	}
	var out []finding
	for _, f := range claims.Doctor(context.Background(), claimsConfig(project, s, s.Claims.Backend)) {
		level := fOK
		if f.Fail {
			level = fFail
		}
		out = append(out, finding{level, "claims: " + f.Text})
	}
	return out
}

// agentFindings are a line per preset and per endpoint with a command of
// its own: is its program here, and does an endpoint need it.
func agentFindings(project, regPath string) []finding {
	reg, err := registry.Load(regPath)
	var out []finding
	switch {
	case registry.ListsNothing(err):
		out = append(out, finding{fFail, "endpoints: " + regPath + " turns no endpoint on, so no worker can run: delete the # of \"#endpoints:\" and of one endpoint's lines ('fleetwatch agents' shows them)"})
		reg = &registry.Registry{}
	case errors.Is(err, fs.ErrNotExist):
		reg = &registry.Registry{}
	case err != nil:
		return []finding{{fFail, err.Error()}}
	case len(reg.Endpoints) == 0 && reg.Executor == nil:
		out = append(out, finding{fFail, "endpoints: " + regPath + " lists no endpoint, so no worker can run ('fleetwatch agents' shows the presets)"})
	}
	users, programs := endpointFindings(project, reg)
	return append(presetFindings(users), append(out, programs...)...)
}

// endpointFindings are a line per endpoint (or the executor) with a
// command of its own; users are the endpoints by the preset they run.
func endpointFindings(project string, reg *registry.Registry) (users map[string][]string, out []finding) {
	users = map[string][]string{}
	for _, ep := range reg.Endpoints {
		if ep.Agent != "" && argvIsPreset(ep) {
			users[ep.Agent] = append(users[ep.Agent], ep.Name)
			continue
		}
		if argv := cmpArgv(ep.Command, reg.Executor); argv != nil {
			out = append(out, programFinding("endpoint "+ep.Name, argv, project))
		}
	}
	if len(reg.Endpoints) == 0 && reg.Executor != nil {
		out = append(out, programFinding("executor", reg.Executor, project))
	}
	return users, out
}

// presetFindings are a line per preset: its version and use when its
// program is on PATH, else whether an endpoint (users) needs it.
func presetFindings(users map[string][]string) []finding {
	var presets []finding
	versions := installedVersions(registry.Presets)
	for i, p := range registry.Presets {
		_, err := exec.LookPath(p.Program)
		used := users[p.Name]
		switch {
		case err == nil:
			line := "agent " + p.Name + ": " + versions[i].line(p) + usedBy(used) + "; metered " + meteredBy(p)
			if p.Logins != "" {
				line += "; " + p.Logins
			}
			presets = append(presets, finding{fOK, line})
		case len(used) > 0:
			presets = append(presets, finding{fFail, "agent " + p.Name + ": " + p.Program + " not on PATH, and" + strings.TrimPrefix(usedBy(used), ",") + " (" + p.Docs + ")"})
		default:
			presets = append(presets, finding{fNone, "agent " + p.Name + ": " + p.Program + " not on PATH (no endpoint uses it)"})
		}
	}
	return presets
}

// argvIsPreset reports whether ep's build runs its preset's program.
func argvIsPreset(ep registry.Endpoint) bool {
	p, _ := registry.PresetNamed(ep.Agent)
	return len(ep.Command) > 0 && ep.Command[0] == p.Program
}

func cmpArgv(a, b []string) []string {
	if a != nil {
		return a
	}
	return b
}

func usedBy(eps []string) string {
	switch len(eps) {
	case 0:
		return ""
	case 1:
		return ", endpoint " + eps[0] + " runs it"
	}
	return ", endpoints " + strings.Join(eps, ", ") + " run it"
}

func programFinding(who string, argv []string, project string) finding {
	resolved, err := proc.CheckExecutor(argv, project)
	if err != nil {
		return finding{fFail, who + ": " + err.Error()}
	}
	return finding{fOK, who + ": " + resolved[0]}
}
