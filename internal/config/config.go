// Package config reads fleetwatch.yaml, the project's settings file at its
// root: one loader, so every setting the engine grows (the integration
// branch today; checks, queue depth and claims backends later) is parsed and
// refused the same way. An unknown key or a bad value is one line naming the
// file and line; a missing file means the defaults.
package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/refname"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
)

// File is the settings file's name in the project root.
const File = "fleetwatch.yaml"

// Settings are a project's settings; the zero value is every default.
type Settings struct {
	// Path is the file read, "" when there was none.
	Path string
	// Integration is the branch worktrees start from and finished work
	// lands on; "" means the first of dev and develop there is (made from
	// main or master when neither is).
	Integration string
	// Checks are the project's required checks (`checks:`), run on each
	// candidate commit; none means changes are ungated.
	Checks []Check
	// QueueDepth is how many queue entries are checked at once (`queue:
	// {depth: N}`), the head and N-1 behind it; 0 means 1.
	QueueDepth int
	// QueueBatch is how many approved entries ride in one candidate (`queue:
	// {batch: N}`), checked once and landed with one compare-and-swap; 0
	// means 1, one at a time.
	QueueBatch int
	// QueueWait is how long `queue run` lets a short batch fill (`wait:`).
	QueueWait time.Duration
	// QueueMaxWait bounds how long an entry waits behind newer, higher
	// ones (`max_wait:`); 0 means DefaultMaxWait.
	QueueMaxWait time.Duration
	// OnScopeViolation is `on_scope_violation:`: "stop" stops an agent that
	// touches a path outside its approved scope and parks its plan in
	// blocked/; "warn" (the default, "") only says so.
	OnScopeViolation string
	// Worktree is the `worktree:` section: a backend per worker (ports,
	// environment, setup and teardown).
	Worktree Worktree
	// Claims is the `claims:` section: local lease files, the git remote's
	// lease refs, or etcd.
	Claims Claims
	// Sandbox is `sandbox:`: auto (the default: agents and checks run in a
	// Landlock domain where the kernel has one), require or off.
	Sandbox sandbox.Mode
	// Egress is `egress:`, where contained processes may connect through
	// the driver's egress proxy (egress.go).
	Egress Egress
	// Prices are `prices:`, what each model costs (spend.go).
	Prices map[string]Price
	// Budgets are `budgets:`, the limits on what runs spend (spend.go).
	Budgets Budgets
	// Limits are `limits:`, caps on live runs (limits.go).
	Limits Limits
	// Notify is `notify:`, where notices go (notify.go); nil when unset.
	Notify *Notify
	// Retries is `retries:`, how many times a plan's task may fail before
	// it is parked in blocked/; 0 means DefaultRetries.
	Retries int
	// ChecksCache is `checks_cache:`, the checks' build caches
	// (checkscache.go).
	ChecksCache ChecksCache
	// Forge is `forge:`, the forge whose pull requests carry finished
	// work (forge.go); its zero value is none.
	Forge Forge
	// WaitForAnswer is `wait_for_answer:`, how long a run waits on a
	// person's answer to its question before it is parked with the
	// question; 0 means DefaultWaitForAnswer.
	WaitForAnswer time.Duration
}

// DefaultWaitForAnswer is `wait_for_answer:` when unset.
const DefaultWaitForAnswer = 30 * time.Minute

// AnswerWait is how long a run waits for a person's answer.
func (s Settings) AnswerWait() time.Duration {
	if s.WaitForAnswer <= 0 {
		return DefaultWaitForAnswer
	}
	return s.WaitForAnswer
}

// DefaultRetries is `retries:` when unset.
const DefaultRetries = 3

// MaxTaskRetries bounds `retries:`.
const MaxTaskRetries = 100

// TaskRetries is how many task failures park a plan.
func (s Settings) TaskRetries() int {
	if s.Retries <= 0 {
		return DefaultRetries
	}
	return s.Retries
}

// Check is one required check: an argv run with no shell in a throwaway
// worktree of the candidate commit.
type Check struct {
	Name    string
	Run     []string
	Timeout time.Duration // 0 means the default, 10 minutes
	// ExpectOutput, when set, must match the check's output for exit 0 to
	// pass (for runners whose "no tests ran" is exit 0).
	ExpectOutput *regexp.Regexp
	// Env are variables added to the check's environment (`env:`), over
	// the ones it inherits.
	Env map[string]string
	// Retries is how many times a check that did not pass runs again on
	// the same tree (`retries:`); a pass on a retry is recorded as flaky.
	Retries int
	// Cache is `cache:`, variable -> folder: the check gets the variable
	// set to a private copy of the folder, thrown away after it.
	Cache map[string]string
	Line  int // where it is declared in fleetwatch.yaml
}

// MaxRetries bounds a check's `retries:`.
const MaxRetries = 3

// MaxQueueBatch bounds `queue: {batch: N}`.
const MaxQueueBatch = 64

// DefaultMaxWait is `queue: {max_wait:}` when unset.
const DefaultMaxWait = 2 * time.Hour

// DefaultCheckTimeout is a check's timeout when it declares none.
const DefaultCheckTimeout = 10 * time.Minute

// MaxCheckTimeout bounds a check's timeout: a longer one is a typo.
const MaxCheckTimeout = 24 * time.Hour

// MaxQueueDepth bounds `queue: {depth: N}`: each entry checked at once is
// a worktree and a run of every check.
const MaxQueueDepth = 8

// limit bounds how much of the file is read: settings are a few lines.
const limit = 1 << 20

// Load reads project's fleetwatch.yaml.
func Load(project string) (Settings, error) {
	path := filepath.Join(project, File)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("%s: %v", path, errText(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return Settings{}, fmt.Errorf("%s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return Settings{}, fmt.Errorf("%s: %v", path, errText(err))
	}
	if len(data) > limit {
		return Settings{}, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	s, err := Parse(data)
	if err != nil {
		return Settings{}, fmt.Errorf("%s:%v", path, err)
	}
	// The forge's token is the driver's: no agent, check or hook gets it.
	gitenv.Withhold(s.Forge.TokenEnv)
	s.Path = path
	return s, nil
}

// lineError is a problem at a line of the file.
type lineError struct {
	line int
	msg  string
}

func (e lineError) Error() string { return strconv.Itoa(e.line) + ": " + e.msg }

func errorf(line int, format string, args ...any) error {
	return lineError{line, fmt.Sprintf(format, args...)}
}

// yamlLine matches yaml.v3's syntax error text, "yaml: line N: message".
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// Parse reads the settings from a file's bytes; its errors start with the
// line ("3: unknown key ...") for Load to prefix with the file.
func Parse(data []byte) (Settings, error) {
	var s Settings
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			return s, errorf(n, "%s", m[2])
		}
		return s, errorf(1, "%v", err)
	}
	if len(doc.Content) == 0 {
		return s, nil // empty, or only comments
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return s, errorf(root.Line, "expected settings as `key: value` lines")
	}
	if err := eachKey(root, "", s.setKey); err != nil {
		return s, err
	}
	if f := s.Forge; f.Base != "" && s.Integration != "" && f.Base != s.Integration {
		return s, errorf(f.Line, "forge: base %s is not integration %s: the queue lands where the pull requests go; set one of them", f.Base, s.Integration)
	}
	return s, nil
}

// set reads one top-level key of the file into s.
func (s *Settings) set(key, val *yaml.Node) error {
	set, ok := settingKeys[key.Value]
	if !ok {
		return errorf(key.Line, "unknown key %q (known: integration, checks, queue, on_scope_violation, worktree, claims, sandbox, egress, prices, budgets, limits, notify, retries, checks_cache, forge, wait_for_answer)", key.Value)
	}
	return set(s, val)
}

// settingKeys reads each top-level key but checks_cache (setKey's) into
// Settings.
var settingKeys = map[string]func(s *Settings, val *yaml.Node) error{
	"integration":        (*Settings).setIntegration,
	"checks":             setting(parseChecks, func(s *Settings) *[]Check { return &s.Checks }),
	"queue":              func(s *Settings, val *yaml.Node) error { return parseQueue(val, s) },
	"on_scope_violation": (*Settings).setOnScopeViolation,
	"worktree":           setting(parseWorktree, func(s *Settings) *Worktree { return &s.Worktree }),
	"claims":             setting(parseClaims, func(s *Settings) *Claims { return &s.Claims }),
	"prices":             setting(parsePrices, func(s *Settings) *map[string]Price { return &s.Prices }),
	"budgets":            setting(parseBudgets, func(s *Settings) *Budgets { return &s.Budgets }),
	"limits":             setting(parseCaps, func(s *Settings) *Limits { return &s.Limits }),
	"notify":             setting(parseNotify, func(s *Settings) **Notify { return &s.Notify }),
	"sandbox":            (*Settings).setSandbox,
	"retries":            (*Settings).setRetries,
	"egress":             setting(parseEgress, func(s *Settings) *Egress { return &s.Egress }),
	"forge":              setting(parseForge, func(s *Settings) *Forge { return &s.Forge }),
	"wait_for_answer": setting(func(v *yaml.Node) (time.Duration, error) { return parseDuration(v, "wait_for_answer") },
		func(s *Settings) *time.Duration { return &s.WaitForAnswer }),
}

// setting reads a key with parse and, only when it parses, stores it in
// the field of Settings that field points at.
func setting[T any](parse func(*yaml.Node) (T, error), field func(*Settings) *T) func(*Settings, *yaml.Node) error {
	return func(s *Settings, val *yaml.Node) error {
		v, err := parse(val)
		if err != nil {
			return err
		}
		*field(s) = v
		return nil
	}
}

// setIntegration reads `integration:`, a branch git accepts.
func (s *Settings) setIntegration(val *yaml.Node) error {
	if val.Kind != yaml.ScalarNode || val.Value == "" {
		return errorf(val.Line, "integration: want a branch name, like dev")
	}
	if why := refname.Problem(val.Value); why != "" {
		return errorf(val.Line, "integration: git refuses branch name %q (%s)", val.Value, why)
	}
	s.Integration = val.Value
	return nil
}

// setOnScopeViolation reads `on_scope_violation:`, stop or warn.
func (s *Settings) setOnScopeViolation(val *yaml.Node) error {
	if val.Kind != yaml.ScalarNode || (val.Value != "stop" && val.Value != "warn") {
		return errorf(val.Line, "on_scope_violation: want stop or warn")
	}
	s.OnScopeViolation = val.Value
	return nil
}

// setSandbox reads `sandbox:`, auto, require or off.
func (s *Settings) setSandbox(val *yaml.Node) error {
	m, err := sandbox.ParseMode(val.Value)
	if val.Kind != yaml.ScalarNode || val.Value == "" || err != nil {
		return errorf(val.Line, "sandbox: want auto, require or off")
	}
	s.Sandbox = m
	return nil
}

// setRetries reads `retries:`.
func (s *Settings) setRetries(val *yaml.Node) error {
	n, err := strconv.Atoi(val.Value)
	if val.Kind != yaml.ScalarNode || err != nil || n < 1 || n > MaxTaskRetries {
		return errorf(val.Line, "retries: want how many task failures park a plan, 1 to %d", MaxTaskRetries)
	}
	s.Retries = n
	return nil
}

// checkName is what a check may be called: its name is part of file names
// under var/fleet/checks/.
var checkName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// CheckNameOK reports whether name may name a check.
func CheckNameOK(name string) bool { return checkName().MatchString(name) }

// envName is a variable name a shell would accept.
var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// reservedEnv are the variables the check runner sets itself.
func reservedEnv(name string) bool {
	return name == "PORT" || strings.HasPrefix(name, "FLEET_")
}

const checkKeys = "name, run, timeout, expect_output, env, retries, cache"

// parseChecks reads `checks:`, a list of mappings.
func parseChecks(val *yaml.Node) ([]Check, error) {
	if isNull(val) {
		return nil, nil
	}
	if val.Kind != yaml.SequenceNode {
		return nil, errorf(val.Line, "checks: want a list, like checks: [{name: test, run: [go, test, ./...]}]")
	}
	var out []Check
	names := map[string]int{}
	for _, item := range val.Content {
		c, err := parseCheck(item)
		if err != nil {
			return nil, err
		}
		if first, dup := names[c.Name]; dup {
			return nil, errorf(c.Line, "check %q is declared twice (first at line %d)", c.Name, first)
		}
		names[c.Name] = c.Line
		out = append(out, c)
	}
	return out, nil
}

func parseCheck(item *yaml.Node) (Check, error) {
	c := Check{Line: item.Line, Timeout: DefaultCheckTimeout}
	if item.Kind != yaml.MappingNode {
		return c, errorf(item.Line, "checks: each check is a mapping (%s), like {name: test, run: [go, test, ./...]}", checkKeys)
	}
	if err := eachKey(item, "check: ", c.set); err != nil {
		return c, err
	}
	if c.Name == "" {
		return c, errorf(item.Line, "check: name is required, like name: test")
	}
	if c.Run == nil {
		return c, errorf(item.Line, "check %s: run is required, like run: [go, test, ./...]", c.Name)
	}
	return c, nil
}

// set reads one key of a check.
func (c *Check) set(key, val *yaml.Node) error {
	var err error
	switch key.Value {
	case "name":
		if val.Kind != yaml.ScalarNode || !checkName().MatchString(val.Value) {
			err = errorf(val.Line, "check name: want letters, digits, '.', '-' or '_' (up to 64, starting with a letter or digit), like test")
		}
		c.Name = val.Value
	case "run":
		c.Run, err = parseArgv(val)
	case "timeout":
		c.Timeout, err = parseTimeout(val)
	case "expect_output":
		c.ExpectOutput, err = parseExpectOutput(val)
	case "env":
		c.Env, err = parseEnv(val)
	case "retries":
		c.Retries, err = parseCount(val, "retries", 0, MaxRetries)
	case "cache":
		c.Cache, err = parseCheckCache(val)
	default:
		err = errorf(key.Line, "unknown key %q in a check (known: %s)", key.Value, checkKeys)
	}
	return err
}

// parseExpectOutput reads `expect_output:`, a regular expression.
func parseExpectOutput(val *yaml.Node) (*regexp.Regexp, error) {
	if val.Kind != yaml.ScalarNode || val.Value == "" {
		return nil, errorf(val.Line, "expect_output: want a regular expression, like \"ok\"")
	}
	re, err := regexp.Compile(val.Value)
	if err != nil {
		return nil, errorf(val.Line, "expect_output: %v", err)
	}
	return re, nil
}

// parseArgv reads `run:`, a list of words; no shell ever sees them, so a
// plain string is refused rather than split on spaces.
func parseArgv(val *yaml.Node) ([]string, error) {
	if val.Kind == yaml.ScalarNode && !isNull(val) {
		return nil, errorf(val.Line, "run: want a list of words, no shell runs it: run: [%s]", strings.Join(strings.Fields(val.Value), ", "))
	}
	if val.Kind != yaml.SequenceNode || len(val.Content) == 0 {
		return nil, errorf(val.Line, "run: want a non-empty list of words, like run: [go, test, ./...]")
	}
	argv := make([]string, 0, len(val.Content))
	for _, w := range val.Content {
		if w.Kind != yaml.ScalarNode || isNull(w) {
			return nil, errorf(w.Line, "run: each word is a string")
		}
		argv = append(argv, w.Value)
	}
	if argv[0] == "" {
		return nil, errorf(val.Content[0].Line, "run: the program (first word) is empty")
	}
	return argv, nil
}

func parseTimeout(val *yaml.Node) (time.Duration, error) { return parseDuration(val, "timeout") }

// parseDuration reads a duration with its unit, above 0 and at most
// MaxCheckTimeout; what names the key in errors.
func parseDuration(val *yaml.Node, what string) (time.Duration, error) {
	hint := what + ": want a duration with its unit, like 90s or 10m"
	if val.Kind != yaml.ScalarNode {
		return 0, errorf(val.Line, "%s", hint)
	}
	d, err := time.ParseDuration(val.Value)
	if err != nil {
		return 0, errorf(val.Line, "%s, not %q", hint, val.Value)
	}
	if d <= 0 || d > MaxCheckTimeout {
		return 0, errorf(val.Line, "%s: %v is out of range (above 0, at most %v)", what, d, MaxCheckTimeout)
	}
	return d, nil
}

func parseEnv(val *yaml.Node) (map[string]string, error) {
	if isNull(val) {
		return nil, nil
	}
	if val.Kind != yaml.MappingNode {
		return nil, errorf(val.Line, "env: want NAME: value lines, like env: {GOFLAGS: -count=1}")
	}
	env := map[string]string{}
	for i := 0; i+1 < len(val.Content); i += 2 {
		k, v := val.Content[i], val.Content[i+1]
		switch {
		case !envName().MatchString(k.Value):
			return nil, errorf(k.Line, "env: %q is not a variable name", k.Value)
		case reservedEnv(k.Value):
			return nil, errorf(k.Line, "env: %s is set by fleetwatch for each check", k.Value)
		case v.Kind != yaml.ScalarNode:
			return nil, errorf(v.Line, "env: %s: want a plain value", k.Value)
		}
		if _, dup := env[k.Value]; dup {
			return nil, errorf(k.Line, "env: %s is set twice", k.Value)
		}
		env[k.Value] = v.Value
	}
	return env, nil
}

// parseQueue reads `queue:`, a mapping with depth, batch, wait and
// max_wait, into s.
func parseQueue(val *yaml.Node, s *Settings) error {
	if val.Kind != yaml.MappingNode {
		return errorf(val.Line, "queue: want a mapping, like queue: {depth: 2}")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(val.Content); i += 2 {
		k, v := val.Content[i], val.Content[i+1]
		if seen[k.Value] {
			return errorf(k.Line, "queue: %s is set twice", k.Value)
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "depth":
			s.QueueDepth, err = parseCount(v, "queue: depth", 1, MaxQueueDepth)
		case "batch":
			s.QueueBatch, err = parseCount(v, "queue: batch", 1, MaxQueueBatch)
		case "wait":
			s.QueueWait, err = parseDuration(v, "queue: wait")
		case "max_wait":
			s.QueueMaxWait, err = parseDuration(v, "queue: max_wait")
		default:
			err = errorf(k.Line, "unknown key %q in queue (known: depth, batch, wait, max_wait)", k.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseCount reads a whole number from lo to hi.
func parseCount(v *yaml.Node, what string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || n < lo || n > hi {
		return 0, errorf(v.Line, "%s: want a whole number from %d to %d", what, lo, hi)
	}
	return n, nil
}

// isNull is an empty value (`key:` with nothing after it) or `~`/`null`.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
