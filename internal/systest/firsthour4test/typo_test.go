package firsthour4test

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// A verb that is another verb's subcommand, typed alone or mistyped, is
// answered with that subcommand in one line and exit 2.
func TestTypoNamesAnotherVerbsSubcommand(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t)
	for typed, want := range map[string]string{
		"land": `unknown command "land": did you mean 'fleetwatch queue land'?`,
		"lnad": `unknown command "lnad": did you mean 'fleetwatch queue land'?`,
		"list": `unknown command "list": did you mean 'fleetwatch worktree list' or 'fleetwatch queue list'?`,
		"qeue": `unknown command "qeue": did you mean queue?`,
	} {
		r := fwtest.Run(t, dir, typed)
		if r.Code != 2 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, want) {
			t.Errorf("fleetwatch %s: %v; want %q", typed, r, want)
		}
	}
}
