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
		return func(pos []string, stdout, stderr io.Writer) int {
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
			changes, differ := skillChanges(project)
			refused := len(differ) > 0 && !w.yes
			switch {
			case w.dryRun && refused:
				// A dry run fails where the real run would.
				printSkillChanges(stdout, changes)
				return fail(stderr, exitError, "skill install: would refuse: %s already exists and differs (--yes replaces it)", strings.Join(differ, ", "))
			case w.dryRun:
				printSkillChanges(stdout, changes)
			case refused:
				return fail(stderr, exitError, "skill install: %s already exists and differs (--yes replaces it); nothing written", strings.Join(differ, ", "))
			default:
				if err := writeSkill(changes, stdout); err != nil {
					return fail(stderr, exitError, "skill install: %v", err)
				}
			}
			return exitOK
		}
	})
	cmd.Long = skillUsage
	return cmd
}

// skillChange is what install does to one skill file: create, replace, or
// leave it unchanged.
type skillChange struct{ path, kind, text string }

// skillChanges is what installing the skill into project would do to each
// file, and the files that exist and differ, which only --yes replaces.
func skillChanges(project string) (changes []skillChange, differ []string) {
	body := skillText
	if exe, err := os.Executable(); err == nil && !temporaryBuild(exe) {
		body += "\nIf `fleetwatch` is not on PATH, it is installed at `" + exe + "`.\n"
	}
	for _, f := range skillFiles {
		p := filepath.Join(project, filepath.FromSlash(f.rel))
		c := skillChange{p, "create", f.header + body}
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
	return changes, differ
}

// printSkillChanges is a dry run's account: what would change, and what
// would not.
func printSkillChanges(stdout io.Writer, changes []skillChange) {
	for _, c := range changes {
		if c.kind == "unchanged" {
			fmt.Fprintf(stdout, "unchanged %s\n", c.path)
		} else {
			fmt.Fprintf(stdout, "would %s %s\n", c.kind, c.path)
		}
	}
}

// writeSkill makes the changes, saying each one on stdout once made; it
// stops at the first it cannot make.
func writeSkill(changes []skillChange, stdout io.Writer) error {
	for _, c := range changes {
		if c.kind != "unchanged" {
			if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(c.path, []byte(c.text), 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintf(stdout, "%s %s\n", map[string]string{"create": "created", "replace": "replaced", "unchanged": "unchanged"}[c.kind], c.path)
	}
	return nil
}
