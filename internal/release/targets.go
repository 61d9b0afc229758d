package main

import (
	"fmt"
	"strings"
)

// target is one platform a binary is built for.
type target struct{ os, arch string }

func (t target) String() string { return t.os + "/" + t.arch }

// defaultTargets are the platforms a release ships: Linux, with its
// packages, and macOS (a binary alone: its agents run uncontained), each on
// amd64 and arm64.
var defaultTargets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// supported are the platforms the release builds for.
var supported = map[string]bool{"linux/amd64": true, "linux/arm64": true, "darwin/amd64": true, "darwin/arm64": true}

// parseTargets reads "linux/amd64,linux/arm64", each named once.
func parseTargets(s string) ([]target, error) {
	var out []target
	seen := map[string]bool{}
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimSpace(w)
		if !supported[w] {
			return nil, fmt.Errorf("%q is not one of %s", w, strings.Join(defaultTargets, ", "))
		}
		if seen[w] {
			return nil, fmt.Errorf("%s named twice", w)
		}
		seen[w] = true
		os, arch, _ := strings.Cut(w, "/")
		out = append(out, target{os, arch})
	}
	return out, nil
}
