package cli

import "github.com/spf13/cobra"

// Root is fleetwatch's command tree, as -h describes it, for programs that
// describe it elsewhere: the release writes a man page per command from it
// (go run ./internal/release). The man pages' writer (cobra/doc, with its
// markdown libraries) stays in that program: linked here, their inits
// would run at every start of every fleetwatch process.
func Root() *cobra.Command { return newRoot() }
