//go:build !etcd

package fencetest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/overlap"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) {
	overlap.Default(4)
	fwtest.Main(m, cli.Main)
}
