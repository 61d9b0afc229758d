// Package scopetest runs the real fleetwatch work-once --run on git
// projects whose agents touch files in and out of their plans' scope, and
// checks what the scope scanner and the overlap radar say.
package scopetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/overlap"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

var agent struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// scopeAgent builds internal/testkit/scopeagent once per test binary.
func scopeAgent(t testing.TB) string {
	t.Helper()
	agent.once.Do(func() {
		if agent.dir, agent.err = os.MkdirTemp("", "scopeagent-"); agent.err != nil {
			return
		}
		agent.bin = filepath.Join(agent.dir, "scopeagent")
		if out, err := exec.Command("go", "build", "-o", agent.bin, "github.com/fleetwatch/fleetwatch/internal/testkit/scopeagent").CombinedOutput(); err != nil {
			agent.err = &exec.ExitError{Stderr: out}
		}
	})
	if agent.err != nil {
		t.Fatalf("building the scope agent: %v", agent.err)
	}
	return agent.bin
}

func TestMain(m *testing.M) {
	overlap.Default(4)
	fwtest.Main(m, cli.Main, func() {
		if agent.dir != "" {
			os.RemoveAll(agent.dir)
		}
	})
}
