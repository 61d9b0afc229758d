// Package firsthour4test holds the whole-program tests of issue 40's
// second pass over the first hour: nothing silent, nothing surprising. An
// endpoints.yaml that turns nothing on, an empty plan, a review by the
// author's own endpoint, notices that follow the settings, and a typed verb
// that is another verb's subcommand.
package firsthour4test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/overlap"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) {
	overlap.Default(4)
	fwtest.Main(m, cli.Main)
}

func writeFile(t *testing.T, dir, rel, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, rel), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
