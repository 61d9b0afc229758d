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
)

// Default makes n the default of -test.parallel: `go test -parallel` (or
// -test.parallel on the binary) still decides when given. Call it first
// in TestMain. It parses nothing, so a test binary started as another
// program (fwtest's fleetwatch) is not disturbed by its arguments.
func Default(n int) {
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
