//go:build etcd

package capstest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/etcdtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

// endpoint is the embedded etcd's client URL; "" when it could not start
// (skipReason says why).
var endpoint, skipReason string

// TestMain starts one embedded etcd on loopback for the package's tests;
// the test binary run as fleetwatch starts none.
func TestMain(m *testing.M) {
	etcdtest.Main(m, "capstest", cli.Main, func(e, skip string) { endpoint, skipReason = e, skip })
}
