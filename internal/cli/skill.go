package cli

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// skillText is the /fleet-watch instructions a coding agent follows; the
// same body goes to every agent, under each one's own header.
//
//go:embed skills/fleet-watch.md
var skillText string

// skillFiles are where coding agents look for project commands and skills:
// Claude Code's slash commands, and the open Agent Skills folder (Codex and
// others).
var skillFiles = []struct {
	rel    string
	header string
}{
	{".claude/commands/fleet-watch.md", "---\ndescription: Inspect this project's plan watchers and install reboot-persistent fleetwatch workers per tier (with your consent)\nargument-hint: [project path or name]\n---\n\nProject named by the operator, if any: $ARGUMENTS\n\n"},
	{".agents/skills/fleet-watch/SKILL.md", "---\nname: fleet-watch\ndescription: Inspect a project's .plans/ watchers and install reboot-persistent fleetwatch workers per capability tier, only with the user's consent. Use when asked to set up, check or remove fleet workers, timers or cron jobs for plans.\n---\n\n"},
}

const skillUsage = `Writes the /fleet-watch instructions for coding agents into the project:
` + "  .claude/commands/fleet-watch.md, .agents/skills/fleet-watch/SKILL.md\n"

func skillCmd() *cobra.Command {
	return group("skill", "install the /fleet-watch skill for coding agents", skillUsage, true, skillInstallCmd())
}

func skillInstallCmd() *cobra.Command {
	var w watchFlags
	cmd := leaf("install", "write the /fleet-watch skill into the project", func(fs *pflag.FlagSet) body {
		w.registerProject(fs)
		fs.BoolVar(&w.yes, "yes", false, "replace skill files that differ")
		fs.BoolVar(&w.dryRun, "dry-run", false, "show what would change, change nothing")
		return func(pos []string, stdout, stderr io.Writer) int { return w.installSkill(pos, stdout, stderr) }
	})
	cmd.Long = skillUsage
	return cmd
}

func (w *watchFlags) installSkill(pos []string, stdout, stderr io.Writer) int {
	if len(pos) > 0 {
		return fail(stderr, exitError, "skill install: unexpected argument %q", pos[0])
	}
	project, err := w.projectDir()
	if err != nil {
		return fail(stderr, exitError, "skill install: %v", err)
	}
	if fi, err := os.Stat(project); err != nil || !fi.IsDir() {
		return fail(stderr, exitError, "--project %s: not a folder", project)
	}
	body := skillText
	if exe, err := os.Executable(); err == nil && !temporaryBuild(exe) {
		body += "\nIf `fleetwatch` is not on PATH, it is installed at `" + exe + "`.\n"
	}
	type change struct{ path, kind, text string }
	var changes []change
	var differ []string
	for _, f := range skillFiles {
		p := filepath.Join(project, filepath.FromSlash(f.rel))
		c := change{p, "create", f.header + body}
		if old, err := os.ReadFile(p); err == nil {
			c.kind = "replace"
			if string(old) == c.text {
				c.kind = "unchanged"
			} else {
				differ = append(differ, p)
			}
		}
		changes = append(changes, c)
	}
	refused := len(differ) > 0 && !w.yes
	if w.dryRun {
		for _, c := range changes {
			if c.kind == "unchanged" {
				fmt.Fprintf(stdout, "unchanged %s\n", c.path)
			} else {
				fmt.Fprintf(stdout, "would %s %s\n", c.kind, c.path)
			}
		}
		// A dry run fails where the real run would.
		if refused {
			return fail(stderr, exitError, "skill install: would refuse: %s already exists and differs (--yes replaces it)", strings.Join(differ, ", "))
		}
		return exitOK
	}
	if refused {
		return fail(stderr, exitError, "skill install: %s already exists and differs (--yes replaces it); nothing written", strings.Join(differ, ", "))
	}
	for _, c := range changes {
		if c.kind != "unchanged" {
			if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
				return fail(stderr, exitError, "skill install: %v", err)
			}
			if err := os.WriteFile(c.path, []byte(c.text), 0o644); err != nil {
				return fail(stderr, exitError, "skill install: %v", err)
			}
		}
		fmt.Fprintf(stdout, "%s %s\n", map[string]string{"create": "created", "replace": "replaced", "unchanged": "unchanged"}[c.kind], c.path)
	}
	return exitOK
}
