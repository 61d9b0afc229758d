//go:build !etcd

// Package capstest races many real `work-once --run` workers under
// fleetwatch.yaml's limits: over two clones of one bare git remote and
// over one tree's lease files, with fake agents that record how many of
// them run at once: never more than the cap, and no plan lost. Built with
// -tags etcd, it races them over an embedded etcd too.
package capstest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
