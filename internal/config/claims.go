package config

import (
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"
)

// Claims is the `claims:` section: where workers of a fleet claim plans.
// The zero value is the local lease files.
type Claims struct {
	// Backend names the claims backend ("" means local, the lease
	// files). Which names there are, and what each needs of the other
	// keys, is the backends' own word (planfs/claims' registry), checked
	// where the claims are opened: the ground names no backend.
	Backend string
	// Remote is the git remote whose lease refs hold the claims (git);
	// "" means origin.
	Remote string
	// Endpoints are the etcd cluster's client URLs (etcd).
	Endpoints []string
	// Project is the etcd key prefix's project id; "" means the
	// integration branch's root commit, the same on every machine.
	Project string
	Line    int // where the section is declared
}

const claimsKeys = "backend, remote, endpoints, project"

func parseClaims(val *yaml.Node) (Claims, error) {
	c := Claims{Line: val.Line}
	if isNull(val) {
		return c, nil
	}
	if val.Kind != yaml.MappingNode {
		return c, errorf(val.Line, "claims: want a mapping (%s), like claims: {backend: git, remote: origin}", claimsKeys)
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(val.Content); i += 2 {
		key, v := val.Content[i], val.Content[i+1]
		if first, dup := seen[key.Value]; dup {
			return c, errorf(key.Line, "claims: %s is set twice (first at line %d)", key.Value, first)
		}
		seen[key.Value] = key.Line
		if key.Value != "endpoints" && (v.Kind != yaml.ScalarNode || v.Value == "") {
			return c, errorf(v.Line, "claims: %s: want one word", key.Value)
		}
		if err := c.set(key, v); err != nil {
			return c, err
		}
	}
	return c, nil
}

// set reads one key of the claims section, whose value v was checked to
// be one word (but endpoints').
func (c *Claims) set(key, v *yaml.Node) error {
	switch key.Value {
	case "backend":
		c.Backend = v.Value
	case "remote":
		if strings.ContainsAny(v.Value, " \t\n") || strings.HasPrefix(v.Value, "-") {
			return errorf(v.Line, "claims: remote: %q is not a git remote name", v.Value)
		}
		c.Remote = v.Value
	case "project":
		if strings.ContainsAny(v.Value, "/ \t\n") {
			return errorf(v.Line, "claims: project: %q may not hold a slash or a space", v.Value)
		}
		c.Project = v.Value
	case "endpoints":
		eps, err := parseEndpoints(v)
		if err != nil {
			return err
		}
		c.Endpoints = eps
	default:
		return errorf(key.Line, "claims: unknown key %q (known: %s)", key.Value, claimsKeys)
	}
	return nil
}

// parseEndpoints reads etcd client URLs: a list, or one URL.
func parseEndpoints(v *yaml.Node) ([]string, error) {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	var out []string
	for _, it := range items {
		if it.Kind != yaml.ScalarNode || it.Value == "" {
			return nil, errorf(it.Line, "claims: endpoints: want a list of URLs, like [http://10.0.0.5:2379]")
		}
		u, err := url.Parse(it.Value)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, errorf(it.Line, "claims: endpoints: %q is not an http(s)://HOST:PORT URL", it.Value)
		}
		out = append(out, it.Value)
	}
	if len(out) == 0 {
		return nil, errorf(v.Line, "claims: endpoints: the list is empty")
	}
	return out, nil
}
