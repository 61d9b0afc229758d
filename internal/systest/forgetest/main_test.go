// Package forgetest runs the landing through a real Gitea on loopback, as
// real processes: a plan goes from work-once --run to a pull request, is
// approved by a person on the forge, and lands by either way (the queue's
// push, the forge's pinned merge); a PR whose head moved after the
// approval never lands.
package forgetest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) {
	fwtest.Main(m, cli.Main)
}
