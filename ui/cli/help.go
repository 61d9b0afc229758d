package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetwatch/fleetwatch/docs"
)

// helpCmd is `help [command|topic]`: a command's usage, description and
// examples, then its page of the manual when it has one; a topic alone is
// its page, the markdown of docs/TOPIC.md as it reads in the repository.
func helpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command|topic]",
		Short: "show a command's usage, or a topic of the manual",
		Long:  "Without an argument: every command, and the manual's topics.",
		Example: "  fleetwatch help work-once     # its flags, then its page of the manual\n" +
			"  fleetwatch help landing       # a topic: review, checks, the merge queue",
		RunE: func(c *cobra.Command, args []string) error {
			return showHelp(root, c.OutOrStdout(), args)
		},
	}
}

// topicsLine names the manual's topics, for the root's help.
func topicsLine() string {
	return "The manual, 'fleetwatch help TOPIC': " + strings.Join(docs.Topics, ", ") + "."
}

func showHelp(root *cobra.Command, w io.Writer, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(w, helpText(root))
		return nil
	}
	page, isTopic := "", false
	if len(args) == 1 {
		page, isTopic = docs.Page(args[0])
	}
	cmd, rest, err := root.Find(args)
	if err == nil && len(rest) == 0 && cmd != root {
		cmd.InitDefaultHelpFlag()
		fmt.Fprint(w, helpText(cmd))
		if isTopic {
			fmt.Fprint(w, "\n"+page)
		}
		return nil
	}
	if isTopic {
		fmt.Fprint(w, page)
		return nil
	}
	typed := strings.Join(args, " ")
	if n := nearest(typed, helpTargets(root)); n != "" {
		return fmt.Errorf("help: no command or topic %q: did you mean %s? (run 'fleetwatch help')", typed, n)
	}
	return fmt.Errorf("help: no command or topic %q (run 'fleetwatch help')", typed)
}
