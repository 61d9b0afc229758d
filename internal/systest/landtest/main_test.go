// Package landtest runs review and the merge queue as real processes on real
// git repositories: approvals, peer reviews, checks, landings, races and
// crashes.
package landtest

import (
	"testing"

	"fleetwatch/internal/testkit/fwtest"
	"fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
