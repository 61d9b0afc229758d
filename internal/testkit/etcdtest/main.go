//go:build etcd

package etcdtest

import (
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// Main is a whole-program test package's TestMain with one embedded etcd
// on loopback for its tests: started is told the client URL, or why there
// is none, before any test runs. The test binary run as fleetwatch (a
// driver) starts none.
func Main(m *testing.M, name string, fleetwatch func(args []string, stdout, stderr io.Writer) int, started func(endpoint, skip string)) {
	if os.Getenv(fwtest.AsFleetwatch) == "1" {
		fwtest.Main(m, fleetwatch)
		return
	}
	dir, err := os.MkdirTemp("", name+"-etcd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	endpoint, skip, stop := Start(dir, false)
	started(endpoint, skip)
	fwtest.Main(m, fleetwatch, stop, func() { os.RemoveAll(dir) })
}
