package config

import (
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// ChecksCache is `checks_cache:`, how checks find build caches warm. The
// zero value is the default: Go checks read the trusted layer and the
// operator's own GOCACHE (read only) through the lander's cache program.
type ChecksCache struct {
	// Off (`go: false`) gives each check an empty Go build cache of its
	// own, and runs no trusted build.
	Off bool
	// NoOperator (`operator_go_cache: false`) leaves the operator's own
	// GOCACHE out of the layers a check reads.
	NoOperator bool
}

// setKey reads one top-level key of the file into s: checks_cache here,
// the others in set.
func (s *Settings) setKey(key, val *yaml.Node) error {
	if key.Value != "checks_cache" {
		return s.set(key, val)
	}
	c, err := parseChecksCache(val)
	s.ChecksCache = c
	return err
}

// parseChecksCache reads `checks_cache:`, a mapping of go and
// operator_go_cache, each true or false.
func parseChecksCache(val *yaml.Node) (ChecksCache, error) {
	var c ChecksCache
	if val.Kind != yaml.MappingNode {
		return c, errorf(val.Line, "checks_cache: want a mapping, like checks_cache: {operator_go_cache: false}")
	}
	for i := 0; i+1 < len(val.Content); i += 2 {
		k, v := val.Content[i], val.Content[i+1]
		on, ok := boolValue(v)
		switch {
		case k.Value != "go" && k.Value != "operator_go_cache":
			return c, errorf(k.Line, "unknown key %q in checks_cache (known: go, operator_go_cache)", k.Value)
		case !ok:
			return c, errorf(v.Line, "checks_cache: %s: want true or false", k.Value)
		case k.Value == "go":
			c.Off = !on
		default:
			c.NoOperator = !on
		}
	}
	return c, nil
}

func boolValue(v *yaml.Node) (on, ok bool) {
	if v.Kind != yaml.ScalarNode {
		return false, false
	}
	switch v.Value {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// parseCheckCache reads a check's `cache:`, variable -> folder: the check
// gets the variable set to a private copy of the folder (absolute, or
// under ~/).
func parseCheckCache(val *yaml.Node) (map[string]string, error) {
	if isNull(val) {
		return nil, nil
	}
	if val.Kind != yaml.MappingNode {
		return nil, errorf(val.Line, "cache: want NAME: folder lines, like cache: {npm_config_cache: ~/.npm}")
	}
	out := map[string]string{}
	for i := 0; i+1 < len(val.Content); i += 2 {
		k, v := val.Content[i], val.Content[i+1]
		switch {
		case !envName().MatchString(k.Value):
			return nil, errorf(k.Line, "cache: %q is not a variable name", k.Value)
		case reservedEnv(k.Value) || cacheReserved(k.Value):
			return nil, errorf(k.Line, "cache: %s is set by fleetwatch for each check", k.Value)
		case v.Kind != yaml.ScalarNode || !(filepath.IsAbs(v.Value) || strings.HasPrefix(v.Value, "~/")):
			return nil, errorf(v.Line, "cache: %s: want an absolute folder or one under ~/, like ~/.npm", k.Value)
		}
		if _, dup := out[k.Value]; dup {
			return nil, errorf(k.Line, "cache: %s is set twice", k.Value)
		}
		out[k.Value] = v.Value
	}
	return out, nil
}

// cacheReserved are the variables a check's sandbox sets itself.
func cacheReserved(name string) bool {
	switch name {
	case "GOCACHE", "GOCACHEPROG", "TMPDIR", "GOTMPDIR", "XDG_CACHE_HOME", "HOME":
		return true
	}
	return false
}
