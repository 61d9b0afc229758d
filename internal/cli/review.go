package cli

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// CONTRACT SKELETON: the review slice replaces this file.
func reviewCmd() *cobra.Command {
	return leaf("review SLUG", "approve, send back, defer or peer-review a change in review-needed/", func(fs *pflag.FlagSet) body {
		return func(pos []string, stdout, stderr io.Writer) int {
			return fail(stderr, exitError, "review: not built yet")
		}
	})
}
