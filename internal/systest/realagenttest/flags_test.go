package realagenttest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/registry"
)

// Every flag a proven preset passes is one its installed CLI documents in
// its own --help (of the subcommand it runs), so a release that renames or
// drops a flag fails here, not in a user's fleet.
func TestPresetFlagsAreInTheirCLIsHelp(t *testing.T) {
	for _, p := range registry.Presets {
		if p.Proven == "" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			bin := fwtest.RealAgent(t, p.Name)
			modes := map[string][]string{"build": p.Build, "review": p.Review, "plan": p.Plan, "resume": p.Resume}
			for _, talk := range p.Talks {
				modes["talk "+talk.Protocol] = talk.Argv
				modes["talk "+talk.Protocol+" asks"] = append(slices.Clone(talk.Argv), talk.AsksArgv...)
			}
			for mode, argv := range modes {
				if argv == nil {
					continue
				}
				help := helpOf(t, bin, subcommand(argv))
				if documents(help, "--fleetwatch-no-such-flag") || !documents(help, "--help") {
					t.Fatalf("the matcher cannot tell a flag from none in:\n%s", help)
				}
				for _, flag := range flagsOf(argv) {
					if !documents(help, flag) {
						t.Errorf("%s's %s argv passes %s, which `%s --help` does not document", p.Name, mode, flag, strings.Join(append([]string{p.Program}, subcommand(argv)...), " "))
					}
				}
			}
		})
	}
}

// subcommand is the words between the program and its first flag.
func subcommand(argv []string) []string {
	var out []string
	for _, w := range argv[1:] {
		if strings.HasPrefix(w, "-") || strings.Contains(w, " ") || strings.Contains(w, "{") {
			break
		}
		out = append(out, w)
	}
	return out
}

// flagsOf are the flags in argv, without their =value.
func flagsOf(argv []string) []string {
	var out []string
	for _, w := range argv[1:] {
		if strings.HasPrefix(w, "-") && len(w) > 1 {
			name, _, _ := strings.Cut(w, "=")
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

func helpOf(t *testing.T, bin string, sub []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(sub, "--help")...)
	cmd.Env = append(cmd.Environ(), "HOME="+t.TempDir(), "NO_COLOR=1", "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		t.Fatalf("%s %v --help: %v", bin, sub, err)
	}
	return string(out)
}

// documents reports whether help names flag as a flag: a word of its own.
func documents(help, flag string) bool {
	return regexp.MustCompile(`(^|[\s,\[|(])` + regexp.QuoteMeta(flag) + `($|[\s,=\]|)<])`).MatchString(help)
}
