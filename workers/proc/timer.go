package proc

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// Spec is one watcher the operator asked for: anchor's --worker
// `agent=mid-1,tier=mid,interval=5m` with the same keys.
type Spec struct {
	Agent    string
	Tier     string // as written; checked with model.ParseTier
	Endpoint string
	Model    string
	Registry string // absolute, or "" for work-once's default
	Interval Interval
	Run      bool
	// Worktree runs each claim in the agent's own git worktree
	// (--ensure-worktree), so agents working side by side never share a
	// checkout.
	Worktree bool
}

// defaultInterval is anchor's.
const defaultInterval = "5m"

// ParseSpec reads a --worker value. Unlike anchor (which passes an unknown
// interval through to systemd and exits 1), every mistake is an error naming
// the key. A relative registry path is taken from cwd, because the unit runs
// somewhere else.
func ParseSpec(s, cwd string) (Spec, error) {
	var sp Spec
	seen := map[string]bool{}
	interval := defaultInterval
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, err := specItem(item, seen)
		if err != nil {
			return Spec{}, err
		}
		if k == "interval" {
			interval = v
		} else if err := sp.set(k, v, cwd); err != nil {
			return Spec{}, err
		}
	}
	if err := sp.missing(); err != nil {
		return Spec{}, err
	}
	iv, err := parseInterval(interval)
	if err != nil {
		return Spec{}, fmt.Errorf("interval: %v", err)
	}
	sp.Interval = iv
	return sp, nil
}

// specItem reads one key=value item of a --worker value: a known key
// (agent-id and agent_id are agent), not seen before, with a value of
// plain text.
func specItem(item string, seen map[string]bool) (k, v string, err error) {
	k, v, ok := strings.Cut(item, "=")
	if !ok {
		return "", "", fmt.Errorf("%q is not key=value", item)
	}
	k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
	switch k {
	case "agent-id", "agent_id":
		k = "agent"
	case "agent", "tier", "endpoint", "interval", "model", "registry", "run", "worktree":
	default:
		return "", "", fmt.Errorf("unknown key %q (want agent, tier, endpoint, interval, model, registry, run, worktree)", k)
	}
	if seen[k] {
		return "", "", fmt.Errorf("%s given twice", k)
	}
	seen[k] = true
	if v == "" {
		return "", "", fmt.Errorf("%s is empty", k)
	}
	if err := PlainText(v); err != nil {
		return "", "", fmt.Errorf("%s: %v", k, err)
	}
	return k, v, nil
}

// missing says what a --worker value lacks: an agent, a tier or an
// endpoint, the endpoint a registry needs.
func (sp *Spec) missing() error {
	switch {
	case sp.Agent == "":
		return errors.New("needs agent=ID")
	case sp.Tier == "" && sp.Endpoint == "":
		return errors.New("needs tier=T or endpoint=NAME")
	case sp.Registry != "" && sp.Endpoint == "":
		return errors.New("registry needs endpoint")
	}
	return nil
}

// set sets one checked key of a --worker value (all but interval).
func (sp *Spec) set(k, v, cwd string) error {
	switch k {
	case "agent":
		sp.Agent = v
	case "tier":
		if _, err := model.ParseTier(v); err != nil {
			return err
		}
		sp.Tier = v
	case "endpoint":
		sp.Endpoint = v
	case "model":
		sp.Model = v
	case "registry":
		if !filepath.IsAbs(v) {
			v = filepath.Join(cwd, v)
		}
		sp.Registry = filepath.Clean(v)
	case "run", "worktree":
		on := false
		switch strings.ToLower(v) {
		case "1", "true", "yes", "on":
			on = true
		case "0", "false", "no", "off":
		default:
			return fmt.Errorf("%s must be 1, true, yes, on (or 0, false, no, off), not %q", k, v)
		}
		if k == "run" {
			sp.Run = on
		} else {
			sp.Worktree = on
		}
	}
	return nil
}

// CheckUnique refuses two watchers with one agent id, or two ids that would
// share a unit or log file name: they would overwrite each other's units
// and read each other's claims as their own.
func CheckUnique(specs []Spec) error {
	byID := map[string]string{}
	for _, s := range specs {
		safe := tree.SafeID(s.Agent)
		if prev, ok := byID[safe]; ok {
			if prev == s.Agent {
				return fmt.Errorf("two workers with agent id %q: each worker needs its own", s.Agent)
			}
			return fmt.Errorf("agent ids %q and %q both become %q in unit names: make them differ in letters or digits", prev, s.Agent, safe)
		}
		byID[safe] = s.Agent
	}
	return nil
}

// Interval is how often a watcher runs, kept in the parts it was written in
// so systemd sees the operator's own units (1h30m → 1h30min, 1.5h → 1.5h).
type Interval struct {
	Raw     string
	Seconds int64
	parts   []intervalPart
}

type intervalPart struct {
	num  string // as systemd reads it: 5, 1.5
	secs int64  // what the part comes to
	unit int64  // seconds per unit
}

// intervalUnits are the unit words anchor accepts, their English spellings,
// and systemd's weeks, in seconds.
var intervalUnits = map[string]int64{
	"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
	"m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
	"h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
	"d": 86400, "day": 86400, "days": 86400,
	"w": 7 * 86400, "week": 7 * 86400, "weeks": 7 * 86400,
}

// maxInterval keeps arithmetic far from overflow; a watcher that wakes less
// than once a year is a mistake.
const maxInterval = 366 * 86400

// parseInterval reads anchor's interval forms: `300` (seconds), `5m`,
// `10min`, `2h`, `30s`, `1d`, compounds like `1h30m`, and what systemd also
// takes: weeks (`1w`, `2weeks`) and fractions that come to whole seconds
// (`1.5h`, `0.5min`). Anything else is an error (anchor passed it to systemd
// unchanged, which then refused the timer).
func parseInterval(s string) (Interval, error) {
	raw := s
	s = strings.TrimSpace(s)
	if s == "" {
		return Interval{}, errors.New("empty")
	}
	iv := Interval{Raw: raw}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		iv.parts = []intervalPart{{strconv.FormatInt(n, 10), n, 1}}
		iv.Seconds = n
	} else if err := iv.addParts(raw, s); err != nil {
		return Interval{}, err
	}
	switch {
	case iv.Seconds <= 0:
		return Interval{}, fmt.Errorf("%q: must be longer than 0", raw)
	case iv.Seconds > maxInterval:
		return Interval{}, fmt.Errorf("%q: longer than a year", raw)
	}
	return iv, nil
}

// addParts reads s (raw, trimmed), amounts each with its unit like 1h30m,
// into iv; it stops once past maxInterval, which the caller refuses.
func (iv *Interval) addParts(raw, s string) error {
	bad := fmt.Errorf("%q is not an interval like 300, 30s, 5m, 1.5h, 1d, 1w or 1h30m", raw)
	rest := s
	for rest != "" {
		num, word, after, ok := cutIntervalPart(rest)
		if !ok {
			return bad
		}
		rest = after
		part, err := readIntervalPart(raw, num, word, bad)
		if err != nil {
			return err
		}
		iv.parts = append(iv.parts, part)
		iv.Seconds += part.secs
		if iv.Seconds > maxInterval {
			break
		}
	}
	return nil
}

// cutIntervalPart cuts the leading amount (digits, maybe a fraction) and
// the unit's word after it from s; false when s starts with no amount.
func cutIntervalPart(s string) (num, word, rest string, ok bool) {
	s = strings.TrimLeft(s, " ")
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return "", "", "", false
	}
	num, s = s[:i], s[i:]
	j := strings.IndexFunc(s, func(r rune) bool { return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') })
	if j < 0 {
		j = len(s)
	}
	return num, s[:j], s[j:], true
}

// readIntervalPart is num of the unit word names; bad when either is no
// amount or unit.
func readIntervalPart(raw, num, word string, bad error) (intervalPart, error) {
	// Units are read in any case, but M is a month to systemd and a
	// minute to many people: refuse it rather than guess.
	if word == "M" {
		return intervalPart{}, fmt.Errorf("%q: M is a month to systemd, not a minute; write min for minutes, or d for days", raw)
	}
	unit, ok := intervalUnits[strings.ToLower(word)]
	if !ok {
		return intervalPart{}, bad
	}
	part, err := intervalAmount(num, unit)
	if err != nil {
		return intervalPart{}, fmt.Errorf("%q: %s%s %v", raw, num, word, err)
	}
	if part == nil {
		return intervalPart{}, bad
	}
	return *part, nil
}

// intervalAmount is num (digits, maybe a fraction) of unit, or nil when num
// is no number. A fraction must come to whole seconds: cron and the unit
// file both count at least that.
func intervalAmount(num string, unit int64) (*intervalPart, error) {
	whole, frac, dot := strings.Cut(num, ".")
	if whole == "" || len(whole) > 9 || len(frac) > 9 || strings.Contains(frac, ".") || dot && frac == "" {
		return nil, nil
	}
	n, _ := strconv.ParseInt(whole, 10, 64)
	part := intervalPart{num: strconv.FormatInt(n, 10), secs: n * unit, unit: unit}
	if frac = strings.TrimRight(frac, "0"); frac != "" {
		f, _ := strconv.ParseInt(frac, 10, 64)
		scale := int64(1)
		for range frac {
			scale *= 10
		}
		if f*unit%scale != 0 {
			return nil, errors.New("is not a whole number of seconds")
		}
		part.num += "." + frac
		part.secs += f * unit / scale
	}
	return &part, nil
}

// Systemd renders the interval as a systemd time span: `5min`, `300s`,
// `1h30min`, `1.5h`, `2w`.
func (iv Interval) Systemd() string {
	var b strings.Builder
	for _, p := range iv.parts {
		if p.secs == 0 {
			continue
		}
		b.WriteString(p.num)
		switch p.unit {
		case 1:
			b.WriteString("s")
		case 60:
			b.WriteString("min")
		case 3600:
			b.WriteString("h")
		case 86400:
			b.WriteString("d")
		default:
			b.WriteString("w")
		}
	}
	return b.String()
}

// PlainText refuses what no unit file or crontab line can carry: control
// characters (a newline would start a new setting) and invalid UTF-8.
func PlainText(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("not valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("%q has a control character", s)
		}
	}
	return nil
}

// WorkArgs is the work-once command line (after the binary) a watcher runs:
// claim one plan and exit, 0 claimed, 1 idle, 2 error.
func WorkArgs(project string, s Spec) []string {
	args := []string{"work-once", "--root", project, "--once", "--agent-id", s.Agent}
	if s.Endpoint != "" {
		args = append(args, "--endpoint", s.Endpoint)
	}
	if s.Tier != "" {
		args = append(args, "--tier", s.Tier)
	}
	if s.Model != "" {
		args = append(args, "--model", s.Model)
	}
	if s.Registry != "" {
		args = append(args, "--registry", s.Registry)
	}
	if s.Run {
		args = append(args, "--run")
	}
	if s.Worktree {
		args = append(args, "--ensure-worktree")
	}
	return args
}

// projectSlug names a project inside unit names, as anchor does: the folder
// name with characters outside [A-Za-z0-9_.-] made `-`, trimmed, lower case.
func projectSlug(project string) string {
	s := strings.ToLower(strings.Trim(tree.Sanitize(filepath.Base(project), "_.-"), ".-"))
	if len(s) > 60 {
		s = strings.TrimRight(s[:60], ".-")
	}
	if s == "" {
		return "project"
	}
	return s
}

// unitStem is `fleetwatch-<project>-<agent>`, the name both unit files share.
// Unlike anchor's, `@` never reaches it: systemd would read it as a
// template instance.
func unitStem(project, agent string) string {
	return "fleetwatch-" + projectSlug(project) + "-" + tree.SafeID(agent)
}

// Unit is one unit file: its name and its text.
type Unit struct {
	Name string
	Text string
}

// Header lines every fleetwatch unit starts with; status and uninstall read
// them back to know whose unit it is.
const (
	unitMark       = "# Written by fleetwatch watch install; fleetwatch watch uninstall removes it."
	unitProjectKey = "# project: "
	unitAgentKey   = "# agent: "
)

// Units returns the service and timer that run s in project every interval,
// with bin (an absolute path) as the fleetwatch binary.
func Units(bin, project string, s Spec) ([]Unit, error) {
	if !filepath.IsAbs(bin) {
		return nil, fmt.Errorf("binary %s: not an absolute path", bin)
	}
	for _, p := range []string{bin, project} {
		if err := UnitPath(p); err != nil {
			return nil, err
		}
	}
	if err := PlainText(s.Agent); err != nil {
		return nil, fmt.Errorf("agent: %v", err)
	}
	stem := unitStem(project, s.Agent)
	if len(stem)+len(".service") > 255 {
		return nil, fmt.Errorf("unit name %s is too long for systemd", stem)
	}
	head := unitMark + "\n" + unitProjectKey + project + "\n" + unitAgentKey + s.Agent + "\n"
	what := "tier " + s.Tier
	if s.Endpoint != "" {
		what = "endpoint " + s.Endpoint
	}
	desc := specifierEscape(fmt.Sprintf("fleetwatch worker %s (%s) for %s", s.Agent, what, filepath.Base(project)))
	argv := append([]string{bin}, WorkArgs(project, s)...)
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = execWord(a)
	}
	service := head + `[Unit]
Description=` + desc + `

[Service]
Type=oneshot
WorkingDirectory=` + specifierEscape(project) + `
ExecStart=` + strings.Join(words, " ") + `
# Exit 1 means there was nothing to claim: idle, not a failure.
SuccessExitStatus=0 1
`
	// systemd fires a timer up to AccuracySec (a minute) late to batch
	// wake-ups, which would stretch 30s to a minute: an interval that
	// counts seconds asks for one second.
	accuracy := ""
	if s.Interval.Seconds%60 != 0 {
		accuracy = "AccuracySec=1s\n"
	}
	timer := head + `[Unit]
Description=` + specifierEscape(fmt.Sprintf("run fleetwatch worker %s for %s every %s", s.Agent, filepath.Base(project), s.Interval.Systemd())) + `

[Timer]
OnBootSec=2min
OnUnitActiveSec=` + s.Interval.Systemd() + `
` + accuracy + `Persistent=true
Unit=` + stem + `.service

[Install]
WantedBy=timers.target
`
	return []Unit{{stem + ".service", service}, {stem + ".timer", timer}}, nil
}

// UnitPath refuses paths a unit file cannot name. WorkingDirectory= takes
// its value verbatim (no quotes: anchor's single quotes made it relative, so
// systemd refused the unit), trims surrounding blanks, and a trailing `\`
// would continue the line.
func UnitPath(p string) error {
	if err := PlainText(p); err != nil {
		return fmt.Errorf("path %v", err)
	}
	if strings.TrimSpace(p) != p || strings.HasSuffix(p, `\`) {
		return fmt.Errorf("path %q starts or ends with a character systemd cannot keep in a unit file", p)
	}
	return nil
}

// specifierEscape doubles `%`, which systemd expands as a specifier (%h, %u)
// in Description=, WorkingDirectory= and ExecStart=.
func specifierEscape(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// execWord quotes one ExecStart= argument the way systemd splits them:
// double quotes around blanks and quotes, C escapes for `\` and `"`, `%%`
// for a specifier sign, `$$` for a literal `$` (else it expands a variable),
// and `\;` for a lone semicolon (else it separates commands).
func execWord(a string) string {
	if a == ";" {
		return `\;`
	}
	quote := a == "" || strings.ContainsAny(a, " \t\"'\\")
	a = strings.NewReplacer("%", "%%", "$", "$$").Replace(a)
	if !quote {
		return a
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(a) + `"`
}

// unitOwner reads the project and agent a fleetwatch unit file was written
// for; ok is false for a file fleetwatch did not write.
func unitOwner(text string) (project, agent string, ok bool) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 3 || lines[0] != unitMark {
		return "", "", false
	}
	project, ok1 := strings.CutPrefix(lines[1], unitProjectKey)
	agent, ok2 := strings.CutPrefix(lines[2], unitAgentKey)
	return project, agent, ok1 && ok2
}
