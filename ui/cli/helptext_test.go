package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command's help has a description and an example after its usage
// line, and each example is a command line fleetwatch takes: its command
// exists and so does every flag it names.
func TestEveryCommandDescribedWithAWorkingExample(t *testing.T) {
	root := newRoot()
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			if s.Hidden || s.Name() == "help" || c.Name() == "completion" {
				continue
			}
			n++
			c.InitDefaultHelpFlag()
			text := helpText(s)
			_, rest, _ := strings.Cut(text, "\n\n")
			if desc, _, _ := strings.Cut(rest, "\n\n"); desc == "" || strings.HasPrefix(desc, "Examples:") || strings.HasPrefix(desc, "Flags:") {
				t.Errorf("%s -h: no description after the usage line:\n%s", s.CommandPath(), text)
			}
			_, ex, ok := strings.Cut(text, "\nExamples:\n")
			if !ok {
				t.Errorf("%s -h: no examples:\n%s", s.CommandPath(), text)
			}
			ex, _, _ = strings.Cut(ex, "\n\n")
			for _, line := range strings.Split(ex, "\n") {
				checkExample(t, root, s.CommandPath(), line)
			}
			walk(s)
		}
	}
	walk(root)
	for _, line := range strings.Split(root.Example, "\n") {
		checkExample(t, root, "fleetwatch", line)
	}
	if n < 40 {
		t.Errorf("only %d commands walked", n)
	}
}

// checkExample finds the command an example line runs and each --flag it
// names on that command.
func checkExample(t *testing.T, root *cobra.Command, name, line string) {
	t.Helper()
	line, _, _ = strings.Cut(line, "  #")
	line, _, _ = strings.Cut(line, "&&")
	line, _, _ = strings.Cut(line, " | ")
	at := strings.Index(line+" ", "fleetwatch ")
	if at < 0 {
		t.Errorf("%s: example %q does not run fleetwatch", name, line)
		return
	}
	words := strings.Fields(strings.TrimRight(line[at+len("fleetwatch"):], ")\" "))
	cmd, rest, err := root.Find(words)
	if err != nil || cmd.HasSubCommands() && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		t.Errorf("%s: example %q: no such command (%v)", name, line, err)
		return
	}
	for _, w := range words {
		flag, _, _ := strings.Cut(w, "=")
		if strings.HasPrefix(flag, "--") && cmd.Flags().Lookup(flag[2:]) == nil {
			t.Errorf("%s: example %q: %s has no %s", name, line, cmd.CommandPath(), flag)
		}
	}
	if len(words) > 0 && cmd == root && !strings.HasPrefix(words[0], "-") {
		t.Errorf("%s: example %q names no command", name, line)
	}
}
