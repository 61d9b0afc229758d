// Package registry reads endpoints.yaml: the named model endpoints workers run as.
//
// The format is anchor's:
//
//	endpoints:
//	  - name: laptop-swarm
//	    tier: swarm
//	    base_url: http://127.0.0.1:8001/v1
//	    model: Qwen/Qwen3-8B
//	    command: [run-agent, --fast]   # optional executor argv
//	  - name: claude
//	    tier: reasoner
//	    model: opus
//	    agent: claude                  # a preset (presets.go) instead of command:
//	    provider: anthropic            # optional, for fleetwatch.yaml's limits:
//	    review_command: [run-agent, --review]  # optional argv for peer reviews
//	executor: [run-agent]              # optional default argv
//
// Keys this package does not know are ignored so that files written for
// anchor keep loading. Every error is a single line naming the file, and the
// line where one is known, e.g. "endpoints.yaml:7: endpoint 2 has no name".
package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/fleetwatch/fleetwatch/internal/spend"
)

// Endpoint is one named model endpoint a worker can run as.
type Endpoint struct {
	Name    string
	Tier    string // raw tier word as written; callers map it with model.ParseTier
	BaseURL string
	Model   string
	Command []string // optional executor argv for this endpoint
	// Agent (`agent:`) names a preset (Presets): its argv fill whichever of
	// command, review_command and plan_command the endpoint leaves out.
	Agent string
	// ReviewCommand is the optional argv of this endpoint's peer reviews;
	// without it a review runs Command with {mode} = review.
	ReviewCommand []string
	// PlanFirst (`plan_first: true`) gives every plan this endpoint takes a
	// plan-only turn and the coordinator's approval before it builds;
	// PlanCommand is that turn's argv (else Command with {mode} = plan).
	PlanFirst   bool
	PlanCommand []string
	// ResumeCommand is the argv of a build that resumes the plan's last
	// session ({session}): its preset's, when the preset's build argv is
	// the one the endpoint runs.
	ResumeCommand []string
	// OnScopeViolation is `on_scope_violation:`, "stop" or "warn"; "" leaves
	// it to fleetwatch.yaml.
	OnScopeViolation string
	// SandboxWrite (`sandbox_write:`) are the extra paths this endpoint's
	// contained agents may write, absolute (a leading ~/ is the home
	// folder): state an agent keeps, such as ~/.claude.
	SandboxWrite []string
	// AutoCommit is `commit: auto`: a build that exits 0 leaving edits
	// and no commit gets them committed by fleetwatch; `commit: agent`
	// (the default) parks it in blocked/.
	AutoCommit bool
	// MaxContext (`max_context: 32k`) is the most tokens the endpoint's
	// model takes in one prompt; a plan whose text cannot fit is not fit
	// for it (model.ContextProblem). 0 is no limit.
	MaxContext int64
	// Provider (`provider: anthropic`) is who serves the model, a name
	// fleetwatch.yaml's limits: may cap across endpoints; "" is none.
	Provider string
	// MaxProcesses (`max_processes: 512`) and MaxMemory (`max_memory:
	// 8GiB`) bound each of its runs as a whole, in its cgroup; 0 keeps
	// the defaults (4,096 processes, a quarter of the machine's memory).
	MaxProcesses int64
	MaxMemory    int64
	// Talk (`talk: acp`) is the protocol its builds hold a conversation
	// in (workers/converse), "" for one-shot runs; its preset gives the
	// argv (Command) and TalkEnv. Asks (`asks: true`) sends the agent's
	// permission requests to the inbox instead of allowing them.
	Talk     string
	TalkEnv  []string
	Asks     bool
	TalkLine int
	Line     int // 1-based line of this entry in the file
	TierLine int // line of the tier: key (0 if absent)
}

// Registry is the parsed contents of one endpoints file.
type Registry struct {
	Path     string
	Executor []string // optional top-level default executor argv
	// SandboxWrite is the top-level `sandbox_write:`: extra paths every
	// endpoint's contained agents may write, the default executor's too.
	SandboxWrite []string
	Endpoints    []Endpoint
}

// DefaultFile is the registry's name at a project's root.
const DefaultFile = "endpoints.yaml"

// Path is the registry a project uses unless told otherwise: endpoints.yaml
// at its root.
func Path(project string) string { return filepath.Join(project, DefaultFile) }

// Load reads and parses the endpoints file at path.
func Load(path string) (*Registry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		// The *fs.PathError text repeats the path after an "open" verb; keep
		// only its cause so the message reads "registry PATH: cause". %w keeps
		// errors.Is(err, fs.ErrNotExist) working.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("registry %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse parses endpoints.yaml content; path is used only in error messages.
func Parse(path string, data []byte) (*Registry, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(path, err)
	}
	p := parser{path: path}
	return p.registry(&doc)
}

// Lookup returns the endpoint with exactly the given name.
func (r *Registry) Lookup(name string) (Endpoint, error) {
	known := make([]string, len(r.Endpoints))
	for i, ep := range r.Endpoints {
		if ep.Name == name {
			return ep, nil
		}
		known[i] = ep.Name
	}
	return Endpoint{}, fmt.Errorf("unknown endpoint %q in %s (known: %s)", name, r.Path, strings.Join(known, ", "))
}

// yamlLine matches yaml.v3's syntax error text, "yaml: line N: message".
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): `) })

// syntaxError rewrites a yaml.v3 error into the package's "path:N: message"
// form. The line number is yaml.v3's own; it omits one for errors on the
// first line, and then so do we.
func syntaxError(path string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s", path, m[1], msg[len(m[0]):])
	}
	return fmt.Errorf("%s: %s", path, msg)
}

type parser struct{ path string }

// listsNothing is a file with nothing in it yet: empty, or every line
// commented out, as scaffold writes it. It is fs.ErrNotExist to errors.Is,
// since such a file is no registry, as a missing one is.
type listsNothing struct{ path string }

func (e listsNothing) Error() string {
	return e.path + ": no endpoints listed yet (uncomment one; 'fleetwatch agents' shows them)"
}
func (e listsNothing) Is(target error) bool { return target == fs.ErrNotExist }

// ListsNothing reports whether err is Load's answer for a file that is there
// but turns no endpoint on (empty, or all commented out as scaffold writes
// it), which errors.Is also takes for fs.ErrNotExist.
func ListsNothing(err error) bool { return errors.As(err, new(listsNothing)) }

func (p parser) errorf(line int, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		return fmt.Errorf("%s:%d: %s", p.path, line, msg)
	}
	return fmt.Errorf("%s: %s", p.path, msg)
}

func (p parser) registry(doc *yaml.Node) (*Registry, error) {
	// An empty or comment-only file decodes to a zero node with no content.
	if len(doc.Content) == 0 {
		return nil, listsNothing{p.path}
	}
	root := deref(doc.Content[0])
	if isNull(root) {
		return nil, listsNothing{p.path}
	}
	if root.Kind != yaml.MappingNode {
		return nil, p.errorf(root.Line, "expected a mapping with an endpoints: list, found %s", kindName(root))
	}
	top, err := p.fields(root)
	if err != nil {
		return nil, err
	}
	reg := &Registry{Path: p.path}
	if err := p.fileWide(reg, top); err != nil {
		return nil, err
	}
	list, err := p.endpointList(reg, top)
	if err != nil {
		return nil, err
	}
	if list == nil {
		return reg, nil
	}
	firstLine := make(map[string]int, len(list.Content))
	for i, n := range list.Content {
		ep, err := p.endpoint(i+1, n)
		if err != nil {
			return nil, err
		}
		if line, dup := firstLine[ep.Name]; dup {
			return nil, p.errorf(ep.Line, "duplicate endpoint %q (first at line %d)", ep.Name, line)
		}
		firstLine[ep.Name] = ep.Line
		reg.Endpoints = append(reg.Endpoints, ep)
	}
	return reg, nil
}

// fileWide reads the keys that hold for every endpoint: the executor and
// the paths every contained agent may write.
func (p parser) fileWide(reg *Registry, top map[string]field) error {
	var err error
	if f, ok := top["executor"]; ok {
		if reg.Executor, err = p.argv(f, "executor"); err != nil {
			return err
		}
	}
	if f, ok := top["sandbox_write"]; ok {
		if reg.SandboxWrite, err = p.paths(f, "sandbox_write"); err != nil {
			return err
		}
	}
	return nil
}

// endpointList finds the endpoints: list, or nil when there is none and
// reg is whole without it.
func (p parser) endpointList(reg *Registry, top map[string]field) (*yaml.Node, error) {
	// A file that names only the executor is whole: `work-once --run`
	// needs nothing more, and its "no executor" hint offers just that.
	f, ok := top["endpoints"]
	switch {
	case !ok && reg.Executor != nil:
		return nil, nil
	case !ok:
		return nil, p.errorf(0, "no endpoints listed")
	}
	list := deref(f.val)
	empty := isNull(list) || (list.Kind == yaml.SequenceNode && len(list.Content) == 0)
	switch {
	case empty && reg.Executor != nil:
		return nil, nil
	case empty:
		return nil, p.errorf(f.key.Line, "no endpoints listed")
	case list.Kind != yaml.SequenceNode:
		return nil, p.errorf(f.key.Line, "endpoints must be a list, found %s", kindName(list))
	}
	return list, nil
}

// endpoint decodes the i'th (1-based) entry of the endpoints list.
func (p parser) endpoint(i int, n *yaml.Node) (Endpoint, error) {
	ep := Endpoint{Line: n.Line}
	m := deref(n)
	if m.Kind != yaml.MappingNode {
		return ep, p.errorf(n.Line, "endpoint %d must be a mapping, found %s", i, kindName(m))
	}
	fields, err := p.fields(m)
	if err != nil {
		return ep, err
	}
	label, err := p.nameAndTier(&ep, fields, i)
	if err != nil {
		return ep, err
	}
	if ep.BaseURL, err = p.scalar(fields, "base_url", label); err != nil {
		return ep, err
	}
	if ep.Model, err = p.scalar(fields, "model", label); err != nil {
		return ep, err
	}
	if err = p.commands(&ep, fields, label); err != nil {
		return ep, err
	}
	if err = p.endpointLimits(&ep, fields, label); err != nil {
		return ep, err
	}
	if err = p.talk(&ep, fields, label); err != nil {
		return ep, err
	}
	if ep.Agent, err = p.scalar(fields, "agent", label); err != nil {
		return ep, err
	}
	if ep.Agent == "" {
		if ep.Talk != "" || ep.Asks {
			return ep, p.errorf(ep.TalkLine, "%s talk: and asks: need agent: (a preset that talks)", label)
		}
		return ep, nil
	}
	return ep, p.applyPreset(&ep, fields["agent"].key.Line)
}

// talkWords are the protocols `talk:` takes (workers/converse's names).
var talkWords = []string{"one-shot", "acp", "app-server", "stream-json"}

// talk reads `talk:` and `asks:`.
func (p parser) talk(ep *Endpoint, fields map[string]field, label string) error {
	v, err := p.scalar(fields, "talk", label)
	if err != nil {
		return err
	}
	if f, ok := fields["talk"]; ok {
		ep.TalkLine = f.key.Line
	}
	if v != "" && !slices.Contains(talkWords, v) {
		return p.errorf(ep.TalkLine, "%s talk must be one of %s, not %q", label, strings.Join(talkWords, ", "), v)
	}
	if v != "one-shot" {
		ep.Talk = v
	}
	f, ok := fields["asks"]
	if !ok {
		return nil
	}
	if ep.TalkLine == 0 {
		ep.TalkLine = f.key.Line
	}
	b := deref(f.val)
	if b.Kind != yaml.ScalarNode || b.ShortTag() != "!!bool" {
		return p.errorf(f.key.Line, "%s asks must be true or false", label)
	}
	ep.Asks = strings.EqualFold(b.Value, "true")
	return nil
}

// nameAndTier reads the i'th endpoint's name and tier, which it must have,
// and returns the label its other errors go by.
func (p parser) nameAndTier(ep *Endpoint, fields map[string]field, i int) (string, error) {
	label := fmt.Sprintf("endpoint %d", i)
	var err error
	if ep.Name, err = p.scalar(fields, "name", label); err != nil {
		return label, err
	}
	if strings.TrimSpace(ep.Name) == "" {
		return label, p.errorf(ep.Line, "%s has no name", label)
	}
	// Names are typed on command lines and printed in one-line errors.
	if strings.ContainsFunc(ep.Name, unicode.IsControl) {
		return label, p.errorf(fields["name"].key.Line, "%s name %q contains control characters", label, ep.Name)
	}
	label = fmt.Sprintf("endpoint %q", ep.Name)
	if ep.Tier, err = p.scalar(fields, "tier", label); err != nil {
		return label, err
	}
	if strings.TrimSpace(ep.Tier) == "" {
		return label, p.errorf(ep.Line, "%s has no tier", label)
	}
	ep.TierLine = fields["tier"].key.Line
	return label, nil
}

// commands reads the endpoint's own command lines (for a run, a review and
// a plan turn) and whether it plans first.
func (p parser) commands(ep *Endpoint, fields map[string]field, label string) error {
	for _, c := range []struct {
		key  string
		argv *[]string
	}{{"command", &ep.Command}, {"review_command", &ep.ReviewCommand}, {"plan_command", &ep.PlanCommand}} {
		f, ok := fields[c.key]
		if !ok {
			continue
		}
		var err error
		if *c.argv, err = p.argv(f, label+" "+c.key); err != nil {
			return err
		}
	}
	f, ok := fields["plan_first"]
	if !ok {
		return nil
	}
	v := deref(f.val)
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
		return p.errorf(f.key.Line, "%s plan_first must be true or false", label)
	}
	ep.PlanFirst = v.Value == "true" || v.Value == "True" || v.Value == "TRUE"
	return nil
}

// endpointLimits reads what bounds an endpoint's runs: its scope rule,
// the paths its agents may write, its commit mode, its context size and
// the provider its caps count under.
func (p parser) endpointLimits(ep *Endpoint, fields map[string]field, label string) error {
	var err error
	if ep.Provider, err = p.provider(fields, label); err != nil {
		return err
	}
	if ep.OnScopeViolation, err = p.scalar(fields, "on_scope_violation", label); err != nil {
		return err
	}
	if v := ep.OnScopeViolation; v != "" && v != "stop" && v != "warn" {
		return p.errorf(fields["on_scope_violation"].key.Line, "%s on_scope_violation must be stop or warn, not %q", label, v)
	}
	if f, ok := fields["sandbox_write"]; ok {
		if ep.SandboxWrite, err = p.paths(f, label+" sandbox_write"); err != nil {
			return err
		}
	}
	if ep.AutoCommit, err = p.commitMode(fields, label); err != nil {
		return err
	}
	for _, n := range endpointNumbers {
		if *n.field(ep), err = p.number(fields, n.key, label, n.parse, n.explain); err != nil {
			return err
		}
	}
	return nil
}

// provider reads `provider:`, one word its caps count under.
func (p parser) provider(fields map[string]field, label string) (string, error) {
	v, err := p.scalar(fields, "provider", label)
	if err != nil {
		return "", err
	}
	if v != "" && (len(v) > 64 || strings.ContainsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })) {
		return "", p.errorf(fields["provider"].key.Line, "%s provider must be one word of at most 64 characters, like anthropic, not %q", label, v)
	}
	return v, nil
}

// endpointNumbers are the optional numbers that bound an endpoint's runs:
// where each goes, how it is read and what a wrong one says.
var endpointNumbers = []struct {
	key     string
	field   func(*Endpoint) *int64
	parse   func(string) (int64, error)
	explain func(v string, err error) string
}{
	{"max_processes", func(ep *Endpoint) *int64 { return &ep.MaxProcesses }, parseProcesses,
		func(v string, _ error) string { return fmt.Sprintf("want a number above 0, not %q", v) }},
	{"max_memory", func(ep *Endpoint) *int64 { return &ep.MaxMemory }, parseBytes, errText},
	{"max_context", func(ep *Endpoint) *int64 { return &ep.MaxContext }, spend.ParseTokens, errText},
}

// parseProcesses reads a count of processes, above 0.
func parseProcesses(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err == nil && n < 1 {
		err = errors.New("not above 0")
	}
	return n, err
}

// errText explains a wrong number by its error alone.
func errText(_ string, err error) string { return err.Error() }

// number reads the optional number key with parse: 0 when it is not set,
// else its value or one error at its line in explain's words.
func (p parser) number(fields map[string]field, key, label string, parse func(string) (int64, error), explain func(string, error) string) (int64, error) {
	v, err := p.scalar(fields, key, label)
	if err == nil && v == "" {
		return 0, nil
	}
	var n int64
	if err == nil {
		n, err = parse(v)
	}
	if err != nil {
		return n, p.errorf(fields[key].key.Line, "%s %s: %s", label, key, explain(v, err))
	}
	return n, nil
}

// commitMode reads `commit:`: auto, or agent (the default).
func (p parser) commitMode(fields map[string]field, label string) (bool, error) {
	v, err := p.scalar(fields, "commit", label)
	if err != nil || v == "" || v == "agent" {
		return false, err
	}
	if v != "auto" {
		return false, p.errorf(fields["commit"].key.Line, "%s commit must be auto or agent, not %q", label, v)
	}
	return true, nil
}

// paths reads a list of absolute paths; a leading ~/ is $HOME.
func (p parser) paths(f field, what string) ([]string, error) {
	list, err := p.argv(f, what)
	if err != nil {
		return nil, err
	}
	for i, s := range list {
		if rest, ok := strings.CutPrefix(s, "~/"); ok {
			home, herr := os.UserHomeDir()
			if herr != nil {
				return nil, p.errorf(f.key.Line, "%s: %q: no home folder (%v)", what, s, herr)
			}
			s = filepath.Join(home, rest)
		}
		if !filepath.IsAbs(s) {
			return nil, p.errorf(f.key.Line, "%s: %q is not an absolute path (or ~/…)", what, s)
		}
		list[i] = filepath.Clean(s)
	}
	return list, nil
}

// SandboxWriteFor is what ep's contained agents may write beyond their
// own: the file's top-level list and the endpoint's.
func (r *Registry) SandboxWriteFor(ep Endpoint) []string {
	var preset []string
	if p, ok := PresetNamed(ep.Agent); ok {
		preset = p.ExistingWrites()
	}
	return append(append(append([]string(nil), r.SandboxWrite...), preset...), ep.SandboxWrite...)
}

// field is one key/value pair of a mapping; the key carries the line.
type field struct{ key, val *yaml.Node }

// fields indexes a mapping by key. It folds in YAML merge keys
// (<<: *defaults) because anchor reads the file with PyYAML, which honours
// them, so shared-default blocks must keep working here.
func (p parser) fields(m *yaml.Node) (map[string]field, error) {
	out := make(map[string]field)
	return out, p.collect(m, out, make(map[*yaml.Node]bool))
}

// collect adds m's keys to out without overriding ones already there, then
// its merged mappings, giving YAML's precedence: own keys beat merged ones
// and earlier merges beat later ones.
func (p parser) collect(m *yaml.Node, out map[string]field, seen map[*yaml.Node]bool) error {
	// A mapping merged twice contributes nothing new; skipping it also keeps
	// fan-out merge chains (each merging the previous one twice) linear.
	if seen[m] {
		return nil
	}
	seen[m] = true
	own := make(map[string]int)
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			continue // complex keys cannot be ones we know; tolerate them
		}
		if k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		// yaml.v3 does not reject duplicate keys when decoding to a Node.
		if line, dup := own[k.Value]; dup {
			return p.errorf(k.Line, "duplicate key %q (first at line %d)", k.Value, line)
		}
		own[k.Value] = k.Line
		if _, set := out[k.Value]; !set {
			out[k.Value] = field{k, v}
		}
	}
	for _, v := range merges {
		if err := p.merge(v, out, seen); err != nil {
			return err
		}
	}
	return nil
}

// merge collects the mapping, or each of the list of mappings, that a
// merge key (<<) names.
func (p parser) merge(v *yaml.Node, out map[string]field, seen map[*yaml.Node]bool) error {
	v = deref(v)
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	for _, it := range items {
		it = deref(it)
		if it.Kind != yaml.MappingNode {
			return p.errorf(it.Line, "merge (<<) value must be a mapping or a list of mappings")
		}
		if err := p.collect(it, out, seen); err != nil {
			return err
		}
	}
	return nil
}

// scalar returns the text of an optional scalar field; numbers and other
// non-string scalars are taken as written, and null counts as absent.
func (p parser) scalar(fields map[string]field, key, label string) (string, error) {
	f, ok := fields[key]
	if !ok {
		return "", nil
	}
	v := deref(f.val)
	if isNull(v) {
		return "", nil
	}
	if v.Kind != yaml.ScalarNode {
		return "", p.errorf(f.key.Line, "%s %s must be a string, found %s", label, key, kindName(v))
	}
	return v.Value, nil
}

// argv decodes an optional command line: a non-empty list of scalars.
func (p parser) argv(f field, what string) ([]string, error) {
	v := deref(f.val)
	if isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, p.errorf(f.key.Line, "%s must be a list of strings, found %s", what, kindName(v))
	}
	if len(v.Content) == 0 {
		return nil, p.errorf(f.key.Line, "%s must not be empty", what)
	}
	args := make([]string, len(v.Content))
	for i, n := range v.Content {
		it := deref(n)
		if it.Kind != yaml.ScalarNode || isNull(it) {
			return nil, p.errorf(n.Line, "%s must be a list of strings, item %d is %s", what, i+1, kindName(it))
		}
		args[i] = it.Value
	}
	return args, nil
}

// deref follows an alias (*name) to its anchored node. yaml.v3 rejects
// unknown anchors and an anchored node is never itself an alias, so one step
// is enough.
func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// kindName describes a node for "found ..." messages.
func kindName(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "null"
	case n.Kind == yaml.ScalarNode:
		return "a string"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	}
	return "an alias"
}

// parseBytes reads a size like 512MiB, 8GiB, 8G or 1048576 (bytes).
func parseBytes(s string) (int64, error) {
	num := strings.TrimRightFunc(strings.TrimSpace(s), unicode.IsLetter)
	unit := strings.ToLower(strings.TrimSpace(s)[len(num):])
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}[unit]
	if err != nil || mult == 0 || n <= 0 || n*mult > 1<<62 {
		return 0, fmt.Errorf("want a size like 512MiB or 8GiB, not %q", s)
	}
	return int64(n * mult), nil
}
