package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"fleetwatch/registry"
)

const agentsLong = `Lists the coding agents fleetwatch can run without a command line of your
own: an endpoint in endpoints.yaml that says agent: NAME (and model:) runs the
preset's argv below, for a build, a peer review and a plan-first turn. Each word
is one argument (no shell); {plan}, {model}, {worktree} and the rest are filled
in as in a command: (fleetwatch help workers). A command:, review_command: or
plan_command: on the endpoint replaces that mode's argv.

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
			for _, p := range presets {
				printPreset(stdout, p)
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

func printPreset(w io.Writer, p registry.Preset) {
	where := "not on PATH"
	if path, err := exec.LookPath(p.Program); err == nil {
		where = "on PATH: " + path
	}
	fmt.Fprintf(w, "%s  (%s)\n", p.Name, where)
	fmt.Fprintf(w, "  build   %s\n", shellWords(p.Build))
	fmt.Fprintf(w, "  review  %s\n", shellWords(p.Review))
	if p.Plan != nil {
		fmt.Fprintf(w, "  plan    %s\n", shellWords(p.Plan))
	} else {
		fmt.Fprintf(w, "  plan    none: plan_first: true needs a plan_command: on the endpoint\n")
	}
	fmt.Fprintf(w, "  writes  %s (granted to its contained runs where they exist)\n", strings.Join(p.Writes, " "))
	fmt.Fprintf(w, "  exits   %s\n", p.Exits)
	fmt.Fprintf(w, "  docs    %s\n\n", p.Docs)
}

// printEndpoints shows each endpoint of the registry at path and the argv
// it runs. A missing default registry is no error: scaffold writes one.
func printEndpoints(w, stderr io.Writer, path string, named bool) int {
	reg, err := registry.Load(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !named:
		fmt.Fprintf(w, "No %s here: 'fleetwatch scaffold' writes one with an endpoint per preset, commented out.\n", path)
		return exitOK
	case err != nil:
		return fail(stderr, exitError, "agents: %v", err)
	}
	fmt.Fprintf(w, "%s:\n", path)
	for _, ep := range reg.Endpoints {
		how := "command:"
		if ep.Agent != "" {
			how = "agent " + ep.Agent
		}
		fmt.Fprintf(w, "  %s  tier %s, model %s, %s\n", ep.Name, ep.Tier, cmp.Or(ep.Model, "-"), how)
		argv := ep.Command
		if argv == nil {
			argv = reg.Executor
		}
		if argv == nil {
			fmt.Fprintf(w, "    build   none: give it agent: or command:, or the file an executor:\n")
			continue
		}
		fmt.Fprintf(w, "    build   %s\n", shellWords(withModel(argv, ep)))
		if ep.ReviewCommand != nil {
			fmt.Fprintf(w, "    review  %s\n", shellWords(withModel(ep.ReviewCommand, ep)))
		}
		if ep.PlanCommand != nil {
			fmt.Fprintf(w, "    plan    %s\n", shellWords(withModel(ep.PlanCommand, ep)))
		}
	}
	return exitOK
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
