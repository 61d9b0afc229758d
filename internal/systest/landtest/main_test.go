// Package landtest runs review and the merge queue as real processes on real
// git repositories: approvals, peer reviews, checks, landings, races and
// crashes.
package landtest

import (
	"testing"

	"fleetwatch/ui/cli"
	"fleetwatch/internal/testkit/fwtest"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
