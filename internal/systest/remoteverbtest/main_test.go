// Package remoteverbtest runs the real fleetwatch binary's operator verbs
// in projects whose claims are on a git remote (remotetest's fleet): each
// verb through the remote, --claims against fleetwatch.yaml, parks racing
// bare picks, plan names git refuses in a ref, and the integration branch
// moved back.
package remoteverbtest

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/overlap"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) {
	overlap.Default(4)
	fwtest.Main(m, cli.Main)
}

// gitIn runs git in dir for a test, failing it on error.
func gitIn(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v in %s: %v", args, dir, err)
	}
	return strings.TrimSpace(string(out))
}
