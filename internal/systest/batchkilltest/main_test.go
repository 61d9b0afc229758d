// Package batchkilltest kills the merge queue's batch lander (kill -9 at a
// failpoint) at each step of a batch and its bisection, then runs it again:
// nothing lost, nothing landed twice, every move of dev checked.
package batchkilltest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
