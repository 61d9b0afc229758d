package cli

import "runtime/debug"

// stamp is a release's version, set by the release build (go run
// ./internal/release) with -ldflags -X; a plain go build leaves it empty.
var stamp string

// version is the release's stamp; else the module version and, where the
// build recorded one, the VCS revision: "v1.2.0 (rev 1a2b3c4d5e6f)",
// "(devel)" for a plain go build.
func version() string {
	if stamp != "" {
		return stamp
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if rev != "" {
		v += " (rev " + rev + dirty + ")"
	}
	return v
}
