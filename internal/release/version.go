package main

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	// described is git describe's "<tag>-<commits since>-g<hash>".
	described = regexp.MustCompile(`^(.+)-([0-9]+)-g([0-9a-f]{4,})$`)
	// semverTag is a tag that is a version: v1.2.0, 1.2.0-rc.1.
	semverTag = regexp.MustCompile(`^v?([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)$`)
	// bareHash is git describe --always with no tag to describe from.
	bareHash = regexp.MustCompile(`^[0-9a-f]{4,}$`)
)

// packageVersion turns a stamped version into the packages' semver, which
// sorts as dpkg and rpm should: v1.2.0 is 1.2.0; three commits past it,
// v1.2.0-3-g1a2b3c4, is 1.2.0+3.g1a2b3c4 (after 1.2.0, not a pre-release
// of it); a commit with no tag before it is 0.0.0+g1a2b3c4; -dirty adds
// .dirty.
func packageVersion(v string) (string, error) {
	rest, dirty := strings.CutSuffix(v, "-dirty")
	var meta []string
	if m := described.FindStringSubmatch(rest); m != nil {
		rest, meta = m[1], []string{m[2], "g" + m[3]}
	}
	base := ""
	switch m := semverTag.FindStringSubmatch(rest); {
	case m != nil:
		base = m[1]
	case meta == nil && bareHash.MatchString(rest):
		base, meta = "0.0.0", []string{"g" + rest}
	default:
		return "", fmt.Errorf("version %q: want a tag like v1.2.0, git describe's v1.2.0-3-g1a2b3c4 or a commit hash", v)
	}
	if dirty {
		meta = append(meta, "dirty")
	}
	if len(meta) > 0 {
		base += "+" + strings.Join(meta, ".")
	}
	return base, nil
}
