package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// Worktree is the `worktree:` section of fleetwatch.yaml: what each agent's
// worktree gets besides its checkout, so agents never share a backend.
//
//	worktree:
//	  ports: 2                      # FLEET_PORT, FLEET_PORT_1
//	  env:
//	    DATABASE_URL: "postgres:///app_{agent_id}"
//	    APP_PORT: "{port}"
//	  setup: [[createdb, "app_{agent_id}"], [make, migrate]]
//	  teardown: [dropdb, --if-exists, "app_{agent_id}"]
//	  timeout: 5m
type Worktree struct {
	// Ports is how many ports each agent gets (a block of N; 0 means the
	// one port every agent already has).
	Ports int
	// Env are the variables written to <worktree>/.env.fleetwatch and put
	// in the executor's environment, in the file's order; their values are
	// templates ({agent_id} {port} {port_1}… {slug} {worktree} {project}).
	Env []EnvVar
	// Setup and Teardown are argvs (no shell) run in the worktree with
	// that environment, in order, each within Timeout.
	Setup, Teardown [][]string
	// Timeout bounds each setup or teardown command; 0 means
	// DefaultBackendTimeout.
	Timeout time.Duration
	Line    int // where the section starts, for errors about it
}

// EnvVar is one `env:` entry.
type EnvVar struct {
	Name, Template string
	Line           int
}

// DefaultBackendTimeout is a setup or teardown command's timeout when the
// section names none.
const DefaultBackendTimeout = 5 * time.Minute

// MaxBackendTimeout bounds `timeout:`: a setup that takes longer holds the
// plan claimed and its worker idle for too long.
const MaxBackendTimeout = time.Hour

// MaxBackendPorts bounds `ports:`: each is taken from the shared range.
const MaxBackendPorts = 16

// Set reports whether fleetwatch.yaml has a `worktree:` section.
func (w Worktree) Set() bool { return w.Line > 0 }

// CommandTimeout is Timeout, or the default when none is set.
func (w Worktree) CommandTimeout() time.Duration {
	if w.Timeout > 0 {
		return w.Timeout
	}
	return DefaultBackendTimeout
}

const worktreeKeys = "ports, env, setup, teardown, timeout"

// parseWorktree reads the `worktree:` section.
func parseWorktree(val *yaml.Node) (Worktree, error) {
	w := Worktree{Line: val.Line}
	if isNull(val) {
		return w, nil
	}
	if val.Kind != yaml.MappingNode {
		return w, errorf(val.Line, "worktree: want a mapping (%s), like worktree: {ports: 2}", worktreeKeys)
	}
	if err := eachKey(val, "worktree: ", w.set); err != nil {
		return w, err
	}
	return w, w.checkPlaceholders(val)
}

// set reads one key of the `worktree:` section.
func (w *Worktree) set(key, v *yaml.Node) error {
	var err error
	switch key.Value {
	case "ports":
		n, aerr := strconv.Atoi(v.Value)
		if v.Kind != yaml.ScalarNode || aerr != nil || n < 1 || n > MaxBackendPorts {
			err = errorf(v.Line, "worktree: ports: want a whole number from 1 to %d", MaxBackendPorts)
		}
		w.Ports = n
	case "env":
		w.Env, err = parseBackendEnv(v)
	case "setup":
		w.Setup, err = parseCommands(key.Value, v)
	case "teardown":
		w.Teardown, err = parseCommands(key.Value, v)
	case "timeout":
		w.Timeout, err = parseBackendTimeout(v)
	default:
		err = errorf(key.Line, "worktree: unknown key %q (known: %s)", key.Value, worktreeKeys)
	}
	return err
}

// parseBackendEnv reads `env:`, NAME: template lines kept in file order.
func parseBackendEnv(val *yaml.Node) ([]EnvVar, error) {
	if isNull(val) {
		return nil, nil
	}
	if val.Kind != yaml.MappingNode {
		return nil, errorf(val.Line, "worktree: env: want NAME: value lines, like env: {DATABASE_URL: \"postgres:///app_{agent_id}\"}")
	}
	var out []EnvVar
	seen := map[string]bool{}
	for i := 0; i+1 < len(val.Content); i += 2 {
		k, v := val.Content[i], val.Content[i+1]
		switch {
		case !envName().MatchString(k.Value):
			return nil, errorf(k.Line, "worktree: env: %q is not a variable name", k.Value)
		case strings.HasPrefix(k.Value, "FLEET_"):
			return nil, errorf(k.Line, "worktree: env: %s: FLEET_ variables are set by fleetwatch", k.Value)
		case v.Kind != yaml.ScalarNode || isNull(v):
			return nil, errorf(v.Line, "worktree: env: %s: want a plain value", k.Value)
		case seen[k.Value]:
			return nil, errorf(k.Line, "worktree: env: %s is set twice", k.Value)
		case strings.ContainsAny(v.Value, "\n\r\x00"):
			return nil, errorf(v.Line, "worktree: env: %s: a value is one line", k.Value)
		}
		seen[k.Value] = true
		out = append(out, EnvVar{Name: k.Value, Template: v.Value, Line: v.Line})
	}
	return out, nil
}

// parseCommands reads `setup:` or `teardown:`: one argv, [createdb, x], or
// a list of them, [[createdb, x], [make, migrate]].
func parseCommands(name string, val *yaml.Node) ([][]string, error) {
	hint := fmt.Sprintf("worktree: %s: want an argv, like [createdb, \"app_{agent_id}\"], or a list of them, like [[createdb, x], [make, migrate]]", name)
	if isNull(val) {
		return nil, nil
	}
	if val.Kind != yaml.SequenceNode || len(val.Content) == 0 {
		return nil, errorf(val.Line, "%s", hint)
	}
	if val.Content[0].Kind != yaml.SequenceNode {
		argv, err := parseWords(name, val)
		return [][]string{argv}, err
	}
	var out [][]string
	for _, item := range val.Content {
		if item.Kind != yaml.SequenceNode {
			return nil, errorf(item.Line, "%s (each item of the list is an argv)", hint)
		}
		argv, err := parseWords(name, item)
		if err != nil {
			return nil, err
		}
		out = append(out, argv)
	}
	return out, nil
}

// parseWords reads one argv: a non-empty list of strings, no shell.
func parseWords(name string, val *yaml.Node) ([]string, error) {
	if len(val.Content) == 0 {
		return nil, errorf(val.Line, "worktree: %s: an argv is a non-empty list of words", name)
	}
	argv := make([]string, 0, len(val.Content))
	for _, w := range val.Content {
		if w.Kind != yaml.ScalarNode || isNull(w) {
			return nil, errorf(w.Line, "worktree: %s: each word is a string (no shell runs it)", name)
		}
		argv = append(argv, w.Value)
	}
	if argv[0] == "" {
		return nil, errorf(val.Line, "worktree: %s: the program (first word) is empty", name)
	}
	return argv, nil
}

func parseBackendTimeout(val *yaml.Node) (time.Duration, error) {
	const hint = "worktree: timeout: want a duration with its unit, like 90s or 5m"
	if val.Kind != yaml.ScalarNode {
		return 0, errorf(val.Line, "%s", hint)
	}
	d, err := time.ParseDuration(val.Value)
	if err != nil {
		return 0, errorf(val.Line, "%s, not %q", hint, val.Value)
	}
	if d <= 0 || d > MaxBackendTimeout {
		return 0, errorf(val.Line, "worktree: timeout: %v is out of range (above 0, at most %v)", d, MaxBackendTimeout)
	}
	return d, nil
}

// placeholder is a `{name}` in a template.
var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`) })

// backendPlaceholders are the names env, setup and teardown may use; {port_N}
// besides, for N below ports.
var backendPlaceholders = map[string]bool{"agent_id": true, "port": true, "slug": true, "worktree": true, "project": true}

// checkPlaceholders refuses a template naming a placeholder fleetwatch does
// not fill, at the line of the word that holds it. It runs once the section
// is read: {port_N} depends on ports:, which may come later.
func (w Worktree) checkPlaceholders(val *yaml.Node) error {
	for _, e := range w.Env {
		if err := w.checkTemplate(e.Line, "env: "+e.Name, e.Template); err != nil {
			return err
		}
	}
	for i := 0; i+1 < len(val.Content); i += 2 {
		key, v := val.Content[i], val.Content[i+1]
		if key.Value != "setup" && key.Value != "teardown" {
			continue
		}
		var err error
		walkScalars(v, func(n *yaml.Node) {
			if err == nil {
				err = w.checkTemplate(n.Line, key.Value, n.Value)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (w Worktree) checkTemplate(line int, what, s string) error {
	for _, m := range placeholder().FindAllStringSubmatch(s, -1) {
		name := m[1]
		if backendPlaceholders[name] {
			continue
		}
		if n, ok := strings.CutPrefix(name, "port_"); ok {
			if i, err := strconv.Atoi(n); err == nil && i >= 1 && i < w.Ports {
				continue
			}
			if i, err := strconv.Atoi(n); err == nil && i >= 1 {
				return errorf(line, "worktree: %s: {%s} needs ports: %d or more (ports: %d)", what, name, i+1, max(w.Ports, 1))
			}
		}
		return errorf(line, "worktree: %s: unknown placeholder {%s} (known: {agent_id} {port} {port_1}… {slug} {worktree} {project})", what, name)
	}
	return nil
}

func walkScalars(n *yaml.Node, f func(*yaml.Node)) {
	if n.Kind == yaml.ScalarNode {
		f(n)
	}
	for _, c := range n.Content {
		walkScalars(c, f)
	}
}
