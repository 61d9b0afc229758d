// Command release builds fleetwatch's release into dist/: a static binary
// per platform (CGO_ENABLED=0, -trimpath, the version from git describe
// stamped in with -ldflags; Linux and macOS, each on amd64 and arm64), a
// .deb and an .rpm per Linux architecture made
// with nfpm as a library (the binary, its man pages, the bash, zsh and
// fish completions), and SHA256SUMS over them all. Run it from the
// module:
//
//	go run ./internal/release                             # every platform
//	go run ./internal/release --targets linux/amd64       # one, as the package test does
//	go run ./internal/release --version v1.2.0 --out /tmp/rel
//
// It is a program of its own, not a fleetwatch verb, so nfpm and its
// dependencies stay out of the binary it ships.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command line, args without the program name, as an exit
// code: 0 built, 2 an error (one line on stderr).
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == manArg {
		return writeManPages(args[1:], stderr)
	}
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "dist", "the folder the release is written to; an earlier release there is replaced")
	targets := fs.String("targets", strings.Join(defaultTargets, ","), "the platforms to build, os/arch separated by commas")
	ver := fs.String("version", "", "the version to stamp (default: git describe --tags --always --dirty)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "release: unexpected argument %q (run 'go run ./internal/release -h')\n", fs.Arg(0))
		return 2
	}
	ts, err := parseTargets(*targets)
	if err != nil {
		fmt.Fprintf(stderr, "release: --targets: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	files, err := build(ctx, plan{out: *out, targets: ts, version: *ver})
	if err != nil {
		fmt.Fprintf(stderr, "release: %v\n", err)
		return 2
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return 0
}
