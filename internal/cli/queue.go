package cli

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// CONTRACT SKELETON: the queue slice replaces this file (a group with add,
// remove, list, land and send-back).
func queueCmd() *cobra.Command {
	return leaf("queue", "the merge queue: add, remove, list, land, send-back", func(fs *pflag.FlagSet) body {
		return func(pos []string, stdout, stderr io.Writer) int {
			return fail(stderr, exitError, "queue: not built yet")
		}
	})
}
