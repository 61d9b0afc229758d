package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra/doc"

	"github.com/fleetwatch/fleetwatch/ui/cli"
)

// manArg runs this program as the man pages' writer (writeDocs): a man
// page per command, from the same tree, descriptions and examples as -h.
// It is a process of its own so that it reads the bare environment
// writeDocs gives it: the commands' defaults come from the environment
// ($USER, $FLEET_*), and the releaser's must not reach the pages. The
// pages live here, not in fleetwatch, so its binary does not link
// cobra/doc and the markdown libraries under it.
const manArg = "write-man-pages"

// writeManPages is `release write-man-pages DIR VERSION`; SOURCE_DATE_EPOCH,
// when set, dates the pages, so a release rebuilt from one commit is the
// same.
func writeManPages(args []string, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintf(stderr, "release: %s takes a folder and a version\n", manArg)
		return 2
	}
	root := cli.Root()
	root.DisableAutoGenTag = true
	root.InitDefaultVersionFlag() // else added only when the command line is read
	head := &doc.GenManHeader{Section: "1", Source: "fleetwatch " + args[1], Manual: "fleetwatch manual"}
	if err := doc.GenManTree(root, head, args[0]); err != nil {
		fmt.Fprintf(stderr, "release: man pages: %v\n", err)
		return 2
	}
	return 0
}
