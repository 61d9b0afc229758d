package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// manCmd is the hidden `fleetwatch man DIR`: a man page per command,
// written from the same tree, descriptions and examples as -h, for the
// release's packages (go run ./internal/release). SOURCE_DATE_EPOCH, when
// set, dates the pages, so a release rebuilt from one commit is the same.
func manCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "write a man page per command into DIR (for packagers)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			root.DisableAutoGenTag = true
			root.InitDefaultVersionFlag() // else added only when the command line is read
			head := &doc.GenManHeader{Section: "1", Source: "fleetwatch " + version(), Manual: "fleetwatch manual"}
			if err := doc.GenManTree(root, head, args[0]); err != nil {
				return fmt.Errorf("man: %v", err)
			}
			return nil
		},
	}
}
