// Package overlap sets how many of a whole-program test package's
// parallel tests run at once. Those tests spend most of their time waiting
// (on lease clocks, heartbeats, git pushes and child processes), not
// computing, and the go tool's default, GOMAXPROCS (2 on the project's CI
// machine), overlaps too few of them. Only tests import it.
package overlap

import (
	"flag"
	"os"
	"strconv"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// Default makes n the default of -test.parallel: `go test -parallel` (or
// -test.parallel on the binary) still decides when given. Call it first
// in TestMain. A child the test binary starts as fleetwatch is left alone:
// its arguments are fleetwatch's.
func Default(n int) {
	if os.Getenv(fwtest.AsFleetwatch) == "1" {
		return
	}
	for _, a := range os.Args[1:] {
		if a == "--" {
			break
		}
		name := strings.TrimLeft(a, "-")
		if name == "test.parallel" || strings.HasPrefix(name, "test.parallel=") {
			return
		}
	}
	if f := flag.Lookup("test.parallel"); f != nil {
		_ = f.Value.Set(strconv.Itoa(n))
	}
}
