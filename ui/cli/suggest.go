package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/docs"
)

// What a mistyped command or flag is told: the nearest name, and for the
// words other tools taught a newcomer, fleetwatch's own.

// otherTools are commands other tools have and what fleetwatch calls them.
var otherTools = map[string]string{
	"init":   "'fleetwatch scaffold' starts a project: .plans/, fleetwatch.yaml and endpoints.yaml",
	"status": "'fleetwatch watch status' shows the workers ('fleetwatch board --once' the plans)",
}

// unknownCommand is the one line for a command root does not have.
func unknownCommand(root *cobra.Command, typed string) error {
	if hint, ok := otherTools[typed]; ok {
		return fmt.Errorf("unknown command %q: %s", typed, hint)
	}
	if n := nearest(typed, commandNames(root)); n != "" {
		return fmt.Errorf("unknown command %q: did you mean %s? (run 'fleetwatch help')", typed, n)
	}
	parents := subcommandParents(root)
	if n := nearest(typed, slices.Sorted(maps.Keys(parents))); n != "" {
		var paths []string
		for _, p := range parents[n] {
			paths = append(paths, "'fleetwatch "+p+" "+n+"'")
		}
		help := "fleetwatch help"
		if len(paths) == 1 {
			help += " " + parents[n][0]
		}
		return fmt.Errorf("unknown command %q: did you mean %s? (run '%s')", typed, orList(paths), help)
	}
	return fmt.Errorf("unknown command %q (run 'fleetwatch help')", typed)
}

// subcommandParents maps each subcommand name to the commands it is under:
// `land` is no verb of its own, but a newcomer types it as one.
func subcommandParents(root *cobra.Command) map[string][]string {
	parents := map[string][]string{}
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		for _, sub := range commandNames(c) {
			parents[sub] = append(parents[sub], c.Name())
		}
	}
	return parents
}

// unknownSub is the one line for a subcommand cmd does not have.
func unknownSub(cmd *cobra.Command, typed string) error {
	names := commandNames(cmd)
	if n := nearest(typed, names); n != "" {
		return fmt.Errorf("%s: unknown subcommand %q: did you mean %s? (want %s)", cmd.Name(), typed, n, orList(names))
	}
	return fmt.Errorf("%s: unknown subcommand %q (want %s)", cmd.Name(), typed, orList(names))
}

// commandNames are the commands a user may type below cmd.
func commandNames(cmd *cobra.Command) []string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			names = append(names, c.Name())
		}
	}
	return names
}

// flagHint is "; did you mean --list?" for a flag cmd does not have but
// nearly does, else "".
func flagHint(cmd *cobra.Command, typed string) string {
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if n := nearest(typed, names); n != "" {
		return "; did you mean --" + n + "?"
	}
	return ""
}

// helpTargets are what `help` takes: the commands and the manual's topics.
func helpTargets(root *cobra.Command) []string {
	names := commandNames(root)
	for _, t := range docs.Topics {
		if !slices.Contains(names, t) {
			names = append(names, t) // work-once is both: one name, not a tie
		}
	}
	return names
}

// nearest is the one name typed is a slip of: the only name it begins, else
// the closest within a couple of keystrokes (fewer for a short word), else "".
func nearest(typed string, names []string) string {
	if typed == "" {
		return ""
	}
	var prefixed []string
	for _, n := range names {
		if strings.HasPrefix(n, typed) && n != typed {
			prefixed = append(prefixed, n)
		}
	}
	if len(prefixed) == 1 && len(typed) > 1 {
		return prefixed[0]
	}
	limit := min(2, max(1, len(typed)/3))
	best, bestD, tie := "", limit+1, false
	for _, n := range names {
		switch d := editDistance(typed, n); {
		case d < bestD:
			best, bestD, tie = n, d, false
		case d == bestD:
			tie = true
		}
	}
	if tie {
		return "" // two names as near: naming one would be a guess
	}
	return best
}

// editDistance counts the insertions, deletions, substitutions and swaps of
// two neighbours that turn a into b (wrok → work is one).
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}
