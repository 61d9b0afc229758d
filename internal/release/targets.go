package main

import (
	"fmt"
	"strings"
)

// target is one platform a binary is built for.
type target struct{ os, arch string }

func (t target) String() string { return t.os + "/" + t.arch }

// defaultTargets are the platforms a release ships: Linux, with its
// packages, on amd64 and arm64.
var defaultTargets = []string{"linux/amd64", "linux/arm64"}

// supported are the platforms the release builds for.
var supported = map[string]bool{"linux/amd64": true, "linux/arm64": true}

// notYet are the platforms fleetwatch does not build for, and why: a
// release refuses them in one line rather than with the compiler's errors.
var notYet = map[string]string{
	"darwin/amd64": "its sandbox (Landlock, cgroups) and its plan moves (renameat2) are Linux's",
	"darwin/arm64": "its sandbox (Landlock, cgroups) and its plan moves (renameat2) are Linux's",
}

// parseTargets reads "linux/amd64,linux/arm64", each named once.
func parseTargets(s string) ([]target, error) {
	var out []target
	seen := map[string]bool{}
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimSpace(w)
		if why, ok := notYet[w]; ok {
			return nil, fmt.Errorf("fleetwatch does not build for %s yet: %s", w, why)
		}
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
