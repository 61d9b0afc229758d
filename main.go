// Command fleetwatch is the plan engine that headless coding-agent workers
// share and the operator's view of it. The commands live in ui/cli.
package main

import (
	"os"

	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
