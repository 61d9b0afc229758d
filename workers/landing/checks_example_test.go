package landing_test

import (
	"context"
	"fmt"
	"os"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// How a lander gates a candidate commit: run what has not run on its tree,
// then count only passes. A second call on the same tree (from this process
// or another) runs nothing; a reader that must not wait asks CachedChecks.
func ExampleRunChecks() {
	project, candidate := "/src/app", "3f2a1c9d0b7e4a5f6c8d9e0f1a2b3c4d5e6f7a8b"
	settings, err := config.Load(project)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	results, err := landing.RunChecks(context.Background(), project, settings.Checks, candidate, os.Stderr)
	if err != nil {
		// Cancelled, or no verdict could be had (no worktree): the
		// results not run say Missing.
		fmt.Fprintln(os.Stderr, err)
	}
	for _, r := range results {
		if r.Result != landing.Pass {
			fmt.Printf("%s: %s (%s), log %s\n", r.Name, r.Result, r.Note, r.Log)
		}
	}

	// The UI and `queue list` only read: Missing, Running, or the verdict.
	tree, _ := landing.TreeOf(project, candidate)
	for _, r := range landing.CachedChecks(project, settings.Checks, tree) {
		fmt.Println(r.Name, r.Result)
	}
}
