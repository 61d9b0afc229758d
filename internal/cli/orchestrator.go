package cli

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"fleetwatch/planfs"
)

// runOrchestrator reads or sets the project's preferred orchestrator, the
// `**Preferred orchestrator:**` line of its conventions file.
func runOrchestrator(args []string, stdout, stderr io.Writer) int {
	var w watchFlags
	var set string
	fs := newFlags("orchestrator")
	w.registerProject(fs)
	fs.StringVar(&set, "set", "", "record this orchestrator, like claude:opus (creates ANCHOR-CONVENTIONS.md when missing)")
	pos, code := parseFlags(fs, args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return fail(stderr, exitError, "orchestrator: unexpected argument %q (to change it: --set %s)", pos[0], pos[0])
	}
	project, err := w.projectDir()
	if err != nil {
		return fail(stderr, exitError, "orchestrator: %v", err)
	}
	if flagGiven(fs, "set") {
		if err := planfs.ValidOrchestrator(set); err != nil {
			return fail(stderr, exitError, "--set: %v", err)
		}
		file, err := planfs.SetOrchestrator(project, set)
		if err != nil {
			return fail(stderr, exitError, "orchestrator: %v", err)
		}
		fmt.Fprintf(stdout, "preferred orchestrator %s (%s)\n", strings.TrimSpace(set), file)
		return exitOK
	}
	v, _, err := planfs.Orchestrator(project)
	if err != nil {
		return fail(stderr, exitError, "orchestrator: %v", err)
	}
	if v == "" {
		names := make([]string, len(planfs.ConventionsFiles))
		for i, n := range planfs.ConventionsFiles {
			names[i] = filepath.Join(project, n)
		}
		return fail(stderr, exitNothing, "orchestrator: none set in %s (--set claude:opus sets one)", strings.Join(names, " or "))
	}
	fmt.Fprintln(stdout, v)
	return exitOK
}

// flagGiven reports whether name was on the command line, so `--set ""` is
// an error rather than a read.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			given = true
		}
	})
	return given
}
