package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// Notify is the `notify:` section: where notices go beyond the cockpit's
// own list and bell. The project's fleetwatch.yaml wins whole; without a
// `notify:` there, the user's own config.yaml (UserFile) is read, so a
// person's webhook follows them into every project without being
// committed to any.
type Notify struct {
	// Webhooks are `webhooks:`, each a URL a notice is POSTed to.
	Webhooks []Webhook
	// Terminal is `terminal:`: the cockpit's own terminal notification
	// (OSC 777 and/or OSC 9); nil when not asked for.
	Terminal *TerminalTarget
	// Desktop is `desktop:`: notify-send, where it is installed.
	Desktop *Target
	// StuckAfter is `stuck_after:`: a claimed plan with no commit on its
	// branch for this long is stuck; 0 means DefaultStuckAfter.
	StuckAfter time.Duration
	// Path is the file it was read from; Line where `notify:` is.
	Path string
	Line int
}

// Target is what every kind of target shares: the notice kinds it takes
// (none listed: all of them) and how many messages a minute it may get.
type Target struct {
	Kinds     []string
	PerMinute int // 0 means DefaultPerMinute
	Line      int
}

// Webhook is one `webhooks:` entry.
type Webhook struct {
	Target
	Name    string // how `notify test --to` and the record name it
	URL     string
	Format  string // json (the default) or slack
	Headers map[string]string
}

// TerminalTarget is `terminal:`: which escape sequences are written.
type TerminalTarget struct {
	Target
	OSC777, OSC9 bool
}

// NoticeKinds are the words `kinds:` takes: model's notice kinds, which
// this package, below model, cannot import (a test in workers/notify
// keeps the two lists equal).
var NoticeKinds = []string{"review", "proposal", "asking", "budget", "failed", "stale", "dead", "expired", "scope",
	"overlap", "gate", "landing", "stuck", "endpoint"}

// DefaultPerMinute is a target's `per_minute:` when unset.
const DefaultPerMinute = 6

// MaxPerMinute bounds `per_minute:`.
const MaxPerMinute = 600

// DefaultStuckAfter is `stuck_after:` when unset.
const DefaultStuckAfter = 2 * time.Hour

// MaxStuckAfter bounds `stuck_after:`.
const MaxStuckAfter = 30 * 24 * time.Hour

func parseStuckAfter(v *yaml.Node) (time.Duration, error) {
	d, err := time.ParseDuration(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || d < time.Minute || d > MaxStuckAfter {
		return 0, errorf(v.Line, "notify: stuck_after: want a duration from 1m to %v, like 2h", MaxStuckAfter)
	}
	return d, nil
}

// UserFile is the user's own settings, under $XDG_CONFIG_HOME (else
// ~/.config); it may hold only `notify:`.
func UserFile() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) { // unset, or relative: the spec says ignore it
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "fleetwatch", "config.yaml")
}

// LoadNotify is the notify settings that apply to project: its
// fleetwatch.yaml's `notify:` when it has one, else the user's file's,
// else none (a zero Notify).
func LoadNotify(project string) (Notify, error) {
	s, err := Load(project)
	if err != nil {
		return Notify{}, err
	}
	if s.Notify != nil {
		n := *s.Notify
		n.Path = s.Path
		return n, nil
	}
	return loadUserNotify(UserFile())
}

func loadUserNotify(path string) (Notify, error) {
	if path == "" {
		return Notify{}, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Notify{}, nil
	}
	if err != nil {
		return Notify{}, fmt.Errorf("%s: %v", path, errText(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && len(data) > limit {
		err = fmt.Errorf("larger than %d bytes", limit)
	}
	if err != nil {
		return Notify{}, fmt.Errorf("%s: %v", path, err)
	}
	n, err := parseUserFile(data)
	if err != nil {
		return Notify{}, fmt.Errorf("%s:%v", path, err)
	}
	n.Path = path
	return n, nil
}

// parseUserFile reads the user's config.yaml: `notify:` and nothing else.
func parseUserFile(data []byte) (Notify, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
			return Notify{}, fmt.Errorf("%s: %s", m[1], m[2])
		}
		return Notify{}, errorf(1, "%v", err)
	}
	if len(doc.Content) == 0 {
		return Notify{}, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return Notify{}, errorf(root.Line, "expected settings as `key: value` lines")
	}
	var n Notify
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		if key.Value != "notify" {
			return Notify{}, errorf(key.Line, "unknown key %q (known: notify; project settings go in the project's %s)", key.Value, File)
		}
		if i > 0 {
			return Notify{}, errorf(key.Line, "notify is set twice (first at line %d)", root.Content[0].Line)
		}
		p, err := parseNotify(val)
		if err != nil {
			return Notify{}, err
		}
		n = *p
	}
	return n, nil
}

const notifyKeys = "webhooks, terminal, desktop, stuck_after"

// parseNotify reads `notify:`.
func parseNotify(val *yaml.Node) (*Notify, error) {
	n := &Notify{Line: val.Line}
	if isNull(val) {
		return n, nil
	}
	if val.Kind != yaml.MappingNode {
		return nil, errorf(val.Line, "notify: want a mapping (%s), like notify: {webhooks: [{url: https://…}]}", notifyKeys)
	}
	if err := eachKey(val, "notify: ", n.set); err != nil {
		return nil, err
	}
	return n, nil
}

// set reads one key of `notify:`.
func (n *Notify) set(key, v *yaml.Node) error {
	var err error
	switch key.Value {
	case "webhooks":
		n.Webhooks, err = parseWebhooks(v)
	case "terminal":
		n.Terminal, err = parseTerminal(v)
	case "desktop":
		var t Target
		t, err = parseTarget("notify: desktop", v, nil)
		n.Desktop = &t
	case "stuck_after":
		n.StuckAfter, err = parseStuckAfter(v)
	default:
		err = errorf(key.Line, "notify: unknown key %q (known: %s)", key.Value, notifyKeys)
	}
	return err
}

// parseTarget reads a target's mapping: kinds and per_minute, and the
// keys of its own kind, handed to own (nil: none).
func parseTarget(what string, val *yaml.Node, own func(k, v *yaml.Node) (bool, error)) (Target, error) {
	t := Target{Line: val.Line}
	if isNull(val) {
		return t, nil
	}
	if val.Kind != yaml.MappingNode {
		return t, errorf(val.Line, "%s: want a mapping, like {kinds: [review, failed], per_minute: 6}", what)
	}
	err := eachKey(val, what+": ", func(k, v *yaml.Node) error { return t.set(what, k, v, own) })
	return t, err
}

// set reads one key of the target what: its kinds, its rate, or one of
// own's (nil: none).
func (t *Target) set(what string, k, v *yaml.Node, own func(k, v *yaml.Node) (bool, error)) error {
	var err error
	switch k.Value {
	case "kinds":
		t.Kinds, err = parseKinds(what, v)
	case "per_minute":
		t.PerMinute, err = parseCount(v, what+": per_minute", 1, MaxPerMinute)
	default:
		handled := false
		if own != nil {
			handled, err = own(k, v)
		}
		if !handled && err == nil {
			err = errorf(k.Line, "%s: unknown key %q", what, k.Value)
		}
	}
	return err
}

func parseKinds(what string, v *yaml.Node) ([]string, error) {
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		return nil, errorf(v.Line, "%s: kinds: want a list, like kinds: [review, failed] (known: %s)", what, strings.Join(NoticeKinds, ", "))
	}
	var out []string
	for _, w := range v.Content {
		if w.Kind != yaml.ScalarNode || !slices.Contains(NoticeKinds, w.Value) {
			return nil, errorf(w.Line, "%s: kinds: unknown kind %q (known: %s)", what, w.Value, strings.Join(NoticeKinds, ", "))
		}
		out = append(out, w.Value)
	}
	return out, nil
}

// targetName is what a webhook may be called: it names the target in
// the record and on the command line.
var targetName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$`) })

func parseWebhooks(val *yaml.Node) ([]Webhook, error) {
	if val.Kind != yaml.SequenceNode {
		return nil, errorf(val.Line, "notify: webhooks: want a list, like webhooks: [{url: https://…, format: slack}]")
	}
	var out []Webhook
	names := map[string]int{}
	for i, item := range val.Content {
		w, err := parseWebhook(item, i+1)
		if err != nil {
			return nil, err
		}
		if first, dup := names[w.Name]; dup {
			return nil, errorf(item.Line, "notify: webhooks: name %q is used twice (first at line %d)", w.Name, first)
		}
		names[w.Name] = item.Line
		out = append(out, w)
	}
	return out, nil
}

func parseWebhook(item *yaml.Node, n int) (Webhook, error) {
	w := Webhook{Name: fmt.Sprintf("webhook-%d", n), Format: "json"}
	var err error
	w.Target, err = parseTarget(webhookWhat, item, w.set)
	if err != nil {
		return w, err
	}
	if item.Kind != yaml.MappingNode || w.URL == "" {
		return w, errorf(item.Line, "%s: url is required, like {url: https://hooks.example.com/…, format: slack}", webhookWhat)
	}
	return w, nil
}

// webhookWhat names a webhook in errors.
const webhookWhat = "notify: webhook"

// set reads one of a webhook's own keys; false for a key that is not.
func (w *Webhook) set(k, v *yaml.Node) (bool, error) {
	var err error
	switch k.Value {
	case "name":
		w.Name, err = webhookName(v)
	case "url":
		w.URL, err = webhookURL(v)
	case "format":
		if v.Kind != yaml.ScalarNode || (v.Value != "json" && v.Value != "slack") {
			return true, errorf(v.Line, "%s: format: want json or slack", webhookWhat)
		}
		w.Format = v.Value
	case "headers":
		w.Headers, err = parseHeaders(v)
	default:
		return false, nil
	}
	return true, err
}

// webhookName reads a webhook's name, which terminal and desktop (the
// other targets) are not.
func webhookName(v *yaml.Node) (string, error) {
	if v.Kind != yaml.ScalarNode || !targetName().MatchString(v.Value) || v.Value == "terminal" || v.Value == "desktop" {
		return "", errorf(v.Line, "%s: name: want letters, digits, '.', '-' or '_' (up to 32; not terminal or desktop), like team", webhookWhat)
	}
	return v.Value, nil
}

// webhookURL reads a webhook's http or https URL.
func webhookURL(v *yaml.Node) (string, error) {
	u, err := url.Parse(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errorf(v.Line, "%s: url: want an http or https URL, like https://hooks.example.com/…", webhookWhat)
	}
	return v.Value, nil
}

// headerName is a field name HTTP accepts.
var headerName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$") })

func parseHeaders(v *yaml.Node) (map[string]string, error) {
	if v.Kind != yaml.MappingNode {
		return nil, errorf(v.Line, "notify: webhook: headers: want Name: value lines, like headers: {Authorization: Bearer …}")
	}
	out := map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		switch {
		case !headerName().MatchString(k.Value):
			return nil, errorf(k.Line, "notify: webhook: headers: %q is not a header name", k.Value)
		// HTTP refuses every control but a tab: such a value would fail
		// each send, not the settings.
		case val.Kind != yaml.ScalarNode || strings.ContainsFunc(val.Value, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }):
			return nil, errorf(val.Line, "notify: webhook: headers: %s: want one line of text", k.Value)
		}
		out[k.Value] = val.Value
	}
	return out, nil
}

func parseTerminal(v *yaml.Node) (*TerminalTarget, error) {
	const what = "notify: terminal"
	t := &TerminalTarget{}
	var err error
	t.Target, err = parseTarget(what, v, func(k, v *yaml.Node) (bool, error) {
		if k.Value != "osc" {
			return false, nil
		}
		words := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			words = v.Content
		}
		for _, w := range words {
			switch {
			case w.Kind == yaml.ScalarNode && w.Value == "777":
				t.OSC777 = true
			case w.Kind == yaml.ScalarNode && w.Value == "9":
				t.OSC9 = true
			default:
				return true, errorf(w.Line, "%s: osc: want 777, 9 or [777, 9]", what)
			}
		}
		return true, nil
	})
	if !t.OSC777 && !t.OSC9 {
		t.OSC777 = true // what most terminals that notify understand
	}
	return t, err
}

// Targets names every target, in the order notify test tries them.
func (n Notify) Targets() []string {
	var out []string
	for _, w := range n.Webhooks {
		out = append(out, w.Name)
	}
	if n.Terminal != nil {
		out = append(out, "terminal")
	}
	if n.Desktop != nil {
		out = append(out, "desktop")
	}
	return out
}
