package landing

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/gitenv"
)

// The checks that gate a landing come from fleetwatch.yaml as committed on
// the integration branch, never from the working tree: anyone who can
// write the project folder (an agent through $FLEET_ROOT) can edit the
// working copy, while the branch moves only by a landing, which is itself
// gated. Other settings (integration, queue depth, worktree backends) still
// come from the working tree.

// maxConfig bounds the committed settings read, as config.Load does.
const maxConfig = 1 << 20

// committedRef names the committed settings file on integration, for
// errors and notices.
func committedRef(integration string) string {
	return "refs/heads/" + integration + ":" + config.File
}

// committedSettings parses fleetwatch.yaml at the tip of the integration
// branch; a branch without the file has the defaults (no checks).
func committedSettings(project, integration string) (config.Settings, error) {
	ref := committedRef(integration)
	data, found, err := showBlob(project, "refs/heads/"+integration+":./"+config.File)
	if err != nil {
		return config.Settings{}, fmt.Errorf("%s: %v", ref, err)
	}
	if !found {
		return config.Settings{}, nil
	}
	s, err := config.Parse(data)
	if err != nil {
		return config.Settings{}, fmt.Errorf("%s:%v", ref, err)
	}
	s.Path = ref
	return s, nil
}

// showBlob is the blob rev names, read with one git call; found is false
// when rev names nothing.
func showBlob(dir, rev string) ([]byte, bool, error) {
	// A blob larger than the bound is refused, never read whole.
	r, err := gitenv.Run(context.Background(), gitenv.Call{Dir: dir, Args: []string{"cat-file", "--batch"}, Stdin: []byte(rev + "\n"), Limit: maxConfig + 256})
	if err != nil {
		return nil, false, err
	}
	head, body, _ := bytes.Cut(r.Out, []byte("\n"))
	f := strings.Fields(string(head))
	if len(f) >= 2 && f[len(f)-1] == "missing" {
		return nil, false, nil
	}
	if len(f) != 3 {
		return nil, false, fmt.Errorf("git cat-file: unexpected answer %q", cmp.Or(strings.TrimSpace(string(head)), "nothing"))
	}
	if f[1] != "blob" {
		return nil, false, fmt.Errorf("a %s, not a file", f[1])
	}
	size, err := strconv.Atoi(f[2])
	switch {
	case err == nil && size > maxConfig:
		return nil, false, fmt.Errorf("larger than %d bytes", maxConfig)
	case err != nil || size < 0 || size > len(body):
		return nil, false, fmt.Errorf("git cat-file: unexpected size %q", f[2])
	}
	return body[:size], true, nil
}

// checksDrift is the notice when the working tree's checks are not the
// committed ones, "" when they are the same.
func checksDrift(working, committed config.Settings, integration string) string {
	if sameChecks(working.Checks, committed.Checks) {
		return ""
	}
	return fmt.Sprintf("%s in the working tree declares other checks than %s; only the committed ones gate (commit it on %s to use it)",
		config.File, committedRef(integration), integration)
}

func sameChecks(a, b []config.Check) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if checkSpec(a[i]) != checkSpec(b[i]) {
			return false
		}
	}
	return true
}
