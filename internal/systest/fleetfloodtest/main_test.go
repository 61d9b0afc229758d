//go:build !etcd

// Package fleetfloodtest runs the real fleetwatch binary on "machines"
// (clones of one bare remote, each with its own var/ and FLEET_HOST) whose
// worker records a hostile clone floods or forges: junk under a host that
// sorts first hides no genuine worker from `watch status` or `worker
// stop`, and a record's own heartbeat and TTL cannot keep a silent worker
// live.
package fleetfloodtest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
