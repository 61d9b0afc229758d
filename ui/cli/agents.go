package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"io"
	"io/fs"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/registry"
)

const agentsLong = `Lists the coding agents fleetwatch can run without a command line of your
own: an endpoint in endpoints.yaml that says agent: NAME (and model:) runs the
preset's argv below, for a build, a peer review and a plan-first turn. Each word
is one argument (no shell); {plan}, {model}, {worktree} and the rest are filled
in as in a command: (fleetwatch help workers). A command:, review_command: or
plan_command: on the endpoint replaces that mode's argv.

Each preset's line says the version of its program found on PATH and whether
the preset was proven against that version (its real CLI ran under a real
driver in fleetwatch's tests), and where its runs are metered: by default by a
proxy in front of the vendor's API, so an endpoint needs no base_url: for its
usage to count.

Then, in a project with an endpoints.yaml, each endpoint and the exact argv it
runs, with its model filled in.`

const agentsExample = `  fleetwatch agents            # every preset, and this project's endpoints
  fleetwatch agents claude     # one preset`

func agentsCmd() *cobra.Command {
	cmd := leaf("agents [NAME]", "the agent presets (agent: in endpoints.yaml) and the exact argv each runs", func(fs *pflag.FlagSet) body {
		var root, reg string
		rootFlag(fs, &root, rootHelp)
		fs.StringVar(&reg, "registry", "", "endpoints.yaml (default: <root>/endpoints.yaml)")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 1 {
				return fail(stderr, exitError, "agents: want at most one preset name, got %d", len(pos))
			}
			presets := registry.Presets
			if len(pos) == 1 {
				p, ok := registry.PresetNamed(pos[0])
				if !ok {
					hint := ""
					if n := nearest(pos[0], presetNames()); n != "" {
						hint = ": did you mean " + n + "?"
					}
					return fail(stderr, exitError, "agents: no preset %q%s (known: %s)", pos[0], hint, strings.Join(presetNames(), ", "))
				}
				presets = []registry.Preset{p}
			}
			versions := installedVersions(presets)
			for i, p := range presets {
				printPreset(stdout, p, versions[i])
			}
			if len(pos) == 0 {
				return printEndpoints(stdout, stderr, cmp.Or(reg, registry.Path(findRoot(root))), reg != "")
			}
			return exitOK
		}
	})
	cmd.Long, cmd.Example = agentsLong, agentsExample
	return cmd
}

func presetNames() []string {
	var out []string
	for _, p := range registry.Presets {
		out = append(out, p.Name)
	}
	return out
}

// printTalks lists the conversations p's tool holds (talk: on an
// endpoint): the argv the plan's first turn goes to, and what asks: adds.
func printTalks(w io.Writer, p registry.Preset) {
	for _, t := range p.Talks {
		fmt.Fprintf(w, "  talk    %s: %s\n", t.Protocol, shellWords(t.Argv))
		if len(t.Env) > 0 {
			fmt.Fprintf(w, "          env %s\n", strings.Join(t.Env, " "))
		}
		if asks := append(slices.Clone(t.AsksArgv), t.AsksEnv...); len(asks) > 0 {
			fmt.Fprintf(w, "          asks: true adds %s\n", strings.Join(asks, " "))
		}
	}
}

func printPreset(w io.Writer, p registry.Preset, v installed) {
	fmt.Fprintf(w, "%s  (%s)\n", p.Name, v.line(p))
	fmt.Fprintf(w, "  build   %s\n", shellWords(p.Build))
	if p.Resume != nil {
		fmt.Fprintf(w, "  resume  %s\n", shellWords(p.Resume))
	}
	fmt.Fprintf(w, "  review  %s\n", shellWords(p.Review))
	if p.Plan != nil {
		fmt.Fprintf(w, "  plan    %s\n", shellWords(p.Plan))
	} else {
		fmt.Fprintf(w, "  plan    none: plan_first: true needs a plan_command: on the endpoint\n")
	}
	if len(p.Env)+len(p.EnvDefaults) > 0 {
		fmt.Fprintf(w, "  env     %s\n", strings.Join(slices.Concat(p.Env, p.EnvDefaults), " "))
	}
	printTalks(w, p)
	fmt.Fprintf(w, "  metered %s\n", meteredBy(p))
	if p.Logins != "" {
		fmt.Fprintf(w, "  logins  %s\n", p.Logins)
	}
	fmt.Fprintf(w, "  writes  %s (granted to its contained runs where they exist)\n", strings.Join(p.Writes, " "))
	fmt.Fprintf(w, "  exits   %s\n", p.Exits)
	fmt.Fprintf(w, "  docs    %s\n\n", p.Docs)
}

// meteredBy says where a preset's runs are metered without a base_url.
func meteredBy(p registry.Preset) string {
	if p.Origin == "" {
		return "only with a base_url: on the endpoint; otherwise on the usage it reports"
	}
	s := "by default, by a proxy in front of " + p.Origin
	if p.OriginEnv != "" {
		s += " (or $" + p.OriginEnv + " when set)"
	}
	return s
}

// installed is what a preset's program says of itself here.
type installed struct {
	path, version string
	err           error
}

// line is where the program is, its version, and whether the preset was
// proven against that version.
func (v installed) line(p registry.Preset) string {
	switch {
	case v.path == "":
		return "not on PATH"
	case v.err != nil:
		return "on PATH: " + v.path + "; its version could not be read: " + v.err.Error()
	case p.Proven == "":
		return "on PATH: " + v.path + ", " + v.version + "; this preset is proven against no version (a stand-in's tests only)"
	case strings.Contains(v.version, p.Proven):
		return "on PATH: " + v.path + ", " + v.version + "; proven against this version"
	}
	return "on PATH: " + v.path + ", " + v.version + "; NOT proven against this version (proven: " + p.Proven + ")"
}

// installedVersions asks each preset's program for its version, all at
// once and each for at most a few seconds.
func installedVersions(presets []registry.Preset) []installed {
	out := make([]installed, len(presets))
	var wg sync.WaitGroup
	for i, p := range presets {
		path, err := exec.LookPath(p.Program)
		if err != nil {
			continue
		}
		out[i].path = path
		if len(p.Version) == 0 {
			out[i].err = errors.New("the preset names no version command")
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i].version, out[i].err = programVersion(path, p.Version[1:])
		}()
	}
	wg.Wait()
	return out
}

// programVersion is the first line a program prints of its version.
func programVersion(path string, args []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.WaitDelay = time.Second
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v", path, strings.Join(args, " "), err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(line) > 80 {
		line = line[:80]
	}
	return termtext.Line(line), nil
}

// printEndpoints shows each endpoint of the registry at path and the argv
// it runs. A missing default registry is no error: scaffold writes one;
// one that turns nothing on says how to turn one on.
func printEndpoints(w, stderr io.Writer, path string, named bool) int {
	reg, err := registry.Load(path)
	switch {
	case registry.ListsNothing(err) || err == nil && len(reg.Endpoints) == 0 && reg.Executor == nil:
		fmt.Fprintf(w, "%s turns no endpoint on yet: delete the # of \"#endpoints:\" and of each line of one endpoint above whose program you have.\n", path)
		return exitOK
	case errors.Is(err, fs.ErrNotExist) && !named:
		fmt.Fprintf(w, "No %s here: 'fleetwatch scaffold' writes one with an endpoint per preset, commented out.\n", path)
		return exitOK
	case err != nil:
		return fail(stderr, exitError, "agents: %v", err)
	}
	fmt.Fprintf(w, "%s:\n", path)
	for _, ep := range reg.Endpoints {
		printEndpoint(w, ep, reg.Executor)
	}
	return exitOK
}

// printEndpoint shows one endpoint and the argv it runs to build (its
// command, else the executor), review and plan.
func printEndpoint(w io.Writer, ep registry.Endpoint, executor []string) {
	how := "command:"
	if ep.Agent != "" {
		how = "agent " + ep.Agent
	}
	fmt.Fprintf(w, "  %s  tier %s, model %s, %s\n", ep.Name, ep.Tier, cmp.Or(ep.Model, "-"), how)
	argv := ep.Command
	if argv == nil {
		argv = executor
	}
	if argv == nil {
		fmt.Fprintf(w, "    build   none: give it agent: or command:, or the file an executor:\n")
		return
	}
	fmt.Fprintf(w, "    build   %s\n", shellWords(withModel(argv, ep)))
	if ep.ReviewCommand != nil {
		fmt.Fprintf(w, "    review  %s\n", shellWords(withModel(ep.ReviewCommand, ep)))
	}
	if ep.PlanCommand != nil {
		fmt.Fprintf(w, "    plan    %s\n", shellWords(withModel(ep.PlanCommand, ep)))
	}
}

// withModel fills in what an endpoint fixes: its model and base URL.
func withModel(argv []string, ep registry.Endpoint) []string {
	r := strings.NewReplacer("{model}", ep.Model, "{base_url}", ep.BaseURL)
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = r.Replace(a)
	}
	return out
}

// shellWords prints argv as a shell would read it back, one word each.
func shellWords(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}();&|<>#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
