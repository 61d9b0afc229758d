//go:build !etcd

package fencetest

import (
	"testing"

	"fleetwatch/ui/cli"
	"fleetwatch/internal/testkit/fwtest"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
