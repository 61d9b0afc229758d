package model

import (
	"strings"
	"unicode"

	"github.com/fleetwatch/fleetwatch/internal/spend"
)

// Header is what a plan says about itself in its `- **Key:** value` bullets.
type Header struct {
	Title     string
	Value     string // high, medium or low
	Priority  string // P1, P2 or P3
	Preferred []string
	// PreferredRaw is the Preferred models text as written, "" when absent.
	PreferredRaw string
	// Assignee is the identity left after trimming notes; "" when absent.
	Assignee        string
	AssigneeRaw     string
	AgentAssignable bool
	DependsOn       []string
	HasDoneWhen     bool
	// Blank are the `## Goal` and `## Done when` sections that are there
	// but hold nothing, as the template leaves them (BlankProblem).
	Blank []Section
	// PlanFirst: `- **Plan first:** yes` asks for a plan-only turn and the
	// coordinator's approval before the agent builds.
	PlanFirst bool
	// AllowedGenerated are the globs of `- **Allowed generated files:**`,
	// paths a build may touch outside its declared scope.
	AllowedGenerated []string
	// Budget is `- **Budget:** 2M tokens, $5`: what this plan's runs may
	// spend, over the project's per-plan budget; none when absent.
	Budget   spend.Limit
	Warnings []Warning
}

// Warning is a problem found in a file; File is filled in by whoever knows it.
type Warning struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

var agentIdentities = map[string]bool{
	"ai": true, "agent": true, "agents": true, "bot": true, "llm": true, "auto": true,
	"any": true, "anyone": true, "unassigned": true, "none": true, "-": true,
}

var noDependency = map[string]bool{"none": true, "n/a": true, "-": true, "nil": true, "null": true}

const (
	keyValue     = "value"
	keyPriority  = "priority"
	keyPreferred = "preferred models"
	keyAssignee  = "assignee"
	keyDepends   = "depends on"
	keyPlanFirst = "plan first"
	keyGenerated = "allowed generated files"
	keyBudget    = "budget"
)

var knownKeys = map[string]bool{keyValue: true, keyPriority: true, keyPreferred: true, keyAssignee: true, keyDepends: true,
	keyPlanFirst: true, keyGenerated: true, keyBudget: true}

// ParseHeader reads a plan's header fields from its text. It follows anchor's
// rules except where SPEC.md fixes them: an empty field is absent, and ` #`
// starts a comment in a value.
func ParseHeader(text string) Header {
	r := headerReader{h: Header{Value: "medium", Priority: "P2", AgentAssignable: true}}
	// The fields set: the first one counts. Not in r, which would move it
	// to the heap.
	seen := map[string]bool{}
	for lineNo := 1; len(text) > 0; lineNo++ {
		var line string
		line, text = nextLine(text)
		r.line(line, lineNo, seen)
	}
	r.sec.close(&r.h)
	r.h.DependsOn = dedupFold(append(r.h.DependsOn, normalizeDeps(r.sectionDeps)...))
	return r.h
}

// nextLine cuts text's first line, which ends at \n, \r\n or a lone \r, as
// Python's universal newlines (anchor's read_text) split them.
func nextLine(text string) (line, rest string) {
	i := strings.IndexAny(text, "\r\n")
	if i < 0 {
		return text, ""
	}
	if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
		return text[:i], text[i+2:]
	}
	return text[:i], text[i+1:]
}

// headerReader is ParseHeader's state between lines.
type headerReader struct {
	h Header
	// sectionDeps are the items of a `## Depends on` section, which
	// inDepsSection says we are in.
	sectionDeps   []string
	inDepsSection bool
	sec           sectionFill
}

// line reads one line of the plan, the lineNo'th.
func (r *headerReader) line(line string, lineNo int, seen map[string]bool) {
	if r.h.Title == "" && strings.HasPrefix(line, "# ") {
		r.h.Title = strings.TrimSpace(line[2:])
	}
	if level, title, ok := heading(line); ok && level >= 2 {
		r.heading(level, strings.ToLower(title), lineNo)
		return
	}
	body := strings.TrimLeft(line, " \t")
	r.sec.text(body)
	if key, value, ok := boldField(body); ok {
		r.field(key, value, lineNo, seen)
		return
	}
	if r.inDepsSection && strings.HasPrefix(body, "-") {
		if tok := sectionToken(body[1:]); tok != "" {
			r.sectionDeps = append(r.sectionDeps, tok)
		}
		return
	}
	r.h.lint(body, lineNo, r.inDepsSection)
}

// heading notes a heading of level 2 or deeper, its title t in lower case.
func (r *headerReader) heading(level int, t string, lineNo int) {
	if level == 2 {
		r.inDepsSection = strings.HasPrefix(t, "depends on")
	}
	if strings.HasPrefix(t, "done when") || strings.HasPrefix(t, "acceptance") {
		r.h.HasDoneWhen = true
	}
	r.sec.heading(&r.h, level, t, lineNo)
}

// field sets a known key the first time it has a value.
func (r *headerReader) field(key, value string, lineNo int, seen map[string]bool) {
	if seen[key] || !knownKeys[key] {
		return
	}
	if value = stripComment(value); value != "" {
		seen[key] = true
		r.h.set(key, value, lineNo)
	}
}

// Section is a plan section by its heading: Name as the plan spells it,
// Line the heading's 1-based line.
type Section struct {
	Name string
	Line int
}

// sectionFill follows the Goal and Done when sections while a plan is read,
// to find those that hold nothing.
type sectionFill struct {
	open   *Section // nil outside such a section
	level  int
	filled bool
}

// heading closes the open section at a heading of its level or above (one
// below it is content) and opens one for a Goal or Done when heading.
func (s *sectionFill) heading(h *Header, level int, title string, line int) {
	if s.open != nil && level > s.level {
		s.filled = true
		return
	}
	s.close(h)
	if strings.HasPrefix(title, "goal") || strings.HasPrefix(title, "done when") || strings.HasPrefix(title, "acceptance") {
		s.open, s.level, s.filled = &Section{Name: sectionTitle(title), Line: line}, level, false
	}
}

func (s *sectionFill) text(body string) {
	if s.open != nil && !s.filled && holdsText(body) {
		s.filled = true
	}
}

func (s *sectionFill) close(h *Header) {
	if s.open != nil && !s.filled {
		h.Blank = append(h.Blank, *s.open)
	}
	s.open = nil
}

func sectionTitle(lower string) string {
	if strings.HasPrefix(lower, "goal") {
		return "Goal"
	}
	if strings.HasPrefix(lower, "done when") {
		return "Done when"
	}
	return "Acceptance"
}

// holdsText reports whether a section line says anything: a bare list
// marker (`-`, `1.`, `- [ ]`) or an HTML comment alone says nothing.
func holdsText(body string) bool {
	s := strings.TrimSpace(body)
	if strings.HasPrefix(s, "<!--") && strings.HasSuffix(s, "-->") {
		return false
	}
	s = strings.TrimLeft(s, "-*+ \t")
	if t := strings.TrimLeft(s, "0123456789"); t != s {
		s = strings.TrimLeft(t, ".) \t")
	}
	for _, box := range []string{"[ ]", "[x]", "[X]"} {
		s = strings.TrimPrefix(s, box)
	}
	return strings.TrimSpace(s) != ""
}

// BlankProblem says why no agent should take a plan with h: a Goal or Done
// when section that is there but empty (the template's blanks, as `new
// --no-edit` leaves them). It returns the first such heading's line, or 0
// and "" when there is none. Anchor would claim such a plan; fleetwatch
// refuses, as an agent with every permission would guess what to do.
func (h Header) BlankProblem() (int, string) {
	if len(h.Blank) == 0 {
		return 0, ""
	}
	names := make([]string, len(h.Blank))
	for i, s := range h.Blank {
		names[i] = "## " + s.Name
	}
	what := "section is"
	if len(names) > 1 {
		what = "sections are"
	}
	return h.Blank[0].Line, strings.Join(names, " and ") + " " + what + " empty: no agent takes a plan that does not say what to do and when it is done; write them"
}

func (h *Header) warn(line int, msg string) {
	h.Warnings = append(h.Warnings, Warning{Line: line, Message: msg})
}

// set reads one header field's value, found at line. A switch, not a
// table of funcs: a call through a func value would move every parsed
// header to the heap.
func (h *Header) set(key, value string, line int) {
	switch key {
	case keyValue:
		h.setValue(value, line)
	case keyPriority:
		h.setPriority(value, line)
	case keyPreferred:
		h.setPreferred(value)
	case keyAssignee:
		h.setAssignee(value)
	case keyDepends:
		h.DependsOn = normalizeDeps(strings.Split(value, ","))
	case keyPlanFirst:
		h.setPlanFirst(value, line)
	case keyBudget:
		h.setBudget(value, line)
	case keyGenerated:
		h.setGenerated(value)
	}
}

func (h *Header) setValue(value string, line int) {
	switch w := strings.ToLower(leadingWord(value)); w {
	case "high", "medium", "low":
		h.Value = w
	default:
		h.warn(line, "value "+quote(value)+" is not high, medium or low; it reads as medium")
	}
}

func (h *Header) setPriority(value string, line int) {
	p, ok := parsePriority(value)
	h.Priority = p
	if !ok {
		h.warn(line, "priority "+quote(value)+" is not P1, P2 or P3; it reads as P2")
	}
}

func (h *Header) setPreferred(value string) {
	h.PreferredRaw = value
	for _, tok := range strings.Split(value, ",") {
		if tok = strings.ToLower(strings.TrimSpace(tok)); tok != "" {
			h.Preferred = append(h.Preferred, tok)
		}
	}
}

func (h *Header) setAssignee(value string) {
	h.AssigneeRaw = value
	h.Assignee = assigneeIdentity(value)
	// The field is present here, so only a listed identity is an agent's;
	// a value that is all note, like `(tbd)`, is "anything else".
	h.AgentAssignable = agentIdentities[strings.ToLower(h.Assignee)]
}

func (h *Header) setPlanFirst(value string, line int) {
	switch w := strings.ToLower(leadingWord(value)); w {
	case "yes", "true", "on":
		h.PlanFirst = true
	case "no", "false", "off":
	default:
		h.warn(line, "plan first "+quote(value)+" is not yes or no; it reads as no")
	}
}

func (h *Header) setBudget(value string, line int) {
	l, err := spend.ParseLimit(value)
	if err != nil {
		h.warn(line, "budget "+quote(value)+": "+err.Error()+"; the project's budget applies")
	}
	h.Budget = l
}

func (h *Header) setGenerated(value string) {
	for _, tok := range strings.Split(value, ",") {
		if tok = strings.Trim(strings.TrimSpace(tok), "`"); tok != "" {
			h.AllowedGenerated = append(h.AllowedGenerated, tok)
		}
	}
}

// lint warns about header-like lines anchor silently ignores, so authors learn
// why a field had no effect.
func (h *Header) lint(body string, line int, inDepsSection bool) {
	if len(body) < 2 {
		return
	}
	if (body[0] == '*' || body[0] == '+') && (body[1] == ' ' || body[1] == '\t') {
		h.lintBullet(body, line, inDepsSection)
		return
	}
	if key, _, ok := boldFieldNoBullet(body); ok && knownKeys[key] {
		h.warn(line, "bold key without `-` bullet is not read; write `- **"+titleKey(key)+":** …`")
		return
	}
	if key := colonOutside(body); knownKeys[key] {
		h.warn(line, "colon outside the bold is not read; write `- **"+titleKey(key)+":** …`")
	}
}

// lintBullet warns of a `*` or `+` bullet, which anchor reads neither
// for a field nor in the Depends on section.
func (h *Header) lintBullet(body string, line int, inDepsSection bool) {
	rest := strings.TrimLeft(body[1:], " \t")
	if key, _, ok := boldFieldNoBullet(rest); ok && knownKeys[key] {
		h.warn(line, "`"+body[:1]+"` bullet is not read; write `- **"+titleKey(key)+":** …`")
	} else if inDepsSection {
		h.warn(line, "`"+body[:1]+"` bullet in Depends on section is not read; use `-`")
	}
}

// colonOutside is the key of a `- **Key**:` line (the colon outside the
// bold), in lower case; "" for any other line.
func colonOutside(body string) string {
	if !strings.HasPrefix(body, "-") {
		return ""
	}
	rest := strings.TrimLeft(body[1:], " \t")
	if !strings.HasPrefix(rest, "**") {
		return ""
	}
	end := strings.Index(rest[2:], "**:")
	if end < 0 {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(rest[2 : 2+end]))
}

// boldField matches `-<ws>**Key:**<rest>` (the space after `-` is optional).
func boldField(body string) (key, value string, ok bool) {
	if !strings.HasPrefix(body, "-") {
		return "", "", false
	}
	return boldFieldNoBullet(strings.TrimLeft(body[1:], " \t"))
}

func boldFieldNoBullet(s string) (key, value string, ok bool) {
	if !strings.HasPrefix(s, "**") {
		return "", "", false
	}
	end := strings.Index(s[2:], ":**")
	if end < 0 {
		return "", "", false
	}
	key = strings.ToLower(strings.TrimSpace(s[2 : 2+end]))
	// The value keeps its leading whitespace so stripComment can tell
	// `**Key:** # note` (a comment) from `**Key:**#1` (a value).
	return key, s[2+end+3:], true
}

// heading returns the level and text of a markdown ATX heading.
func heading(line string) (int, string, bool) {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n >= len(line) || (line[n] != ' ' && line[n] != '\t') {
		return 0, "", false
	}
	return n, strings.TrimSpace(line[n:]), true
}

func stripComment(v string) string {
	for i := 1; i < len(v); i++ {
		if v[i] == '#' && isSpaceByte(v[i-1]) {
			v = v[:i]
			break
		}
	}
	return strings.TrimSpace(v)
}

func leadingWord(v string) string {
	end := 0
	for end < len(v) {
		c := v[end]
		if c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			end++
			continue
		}
		break
	}
	return v[:end]
}

// parsePriority applies anchor's rule: the first token, backticks stripped and
// upper-cased, must start with P?[123].
func parsePriority(v string) (string, bool) {
	tok := v
	if i := strings.IndexFunc(tok, unicode.IsSpace); i >= 0 {
		tok = tok[:i]
	}
	tok = strings.ToUpper(strings.ReplaceAll(tok, "`", ""))
	tok = strings.TrimPrefix(tok, "P")
	if tok != "" && tok[0] >= '1' && tok[0] <= '3' {
		return "P" + tok[:1], true
	}
	return "P2", false
}

// assigneeIdentity cuts notes off an Assignee value: at ` — `, ` – `, ` - `,
// `(` or `,`.
func assigneeIdentity(v string) string {
	cut := len(v)
	if i := strings.IndexAny(v, "(,"); i >= 0 {
		cut = i
	}
	if i := dashNote(v); i >= 0 && i < cut {
		cut = i
	}
	return strings.TrimSpace(strings.ReplaceAll(strings.TrimSpace(v[:cut]), "`", ""))
}

// dashNote finds `<ws>[—–-]<ws>` and returns where its whitespace starts.
func dashNote(v string) int {
	for i, r := range v {
		if r != '-' && r != '—' && r != '–' {
			continue
		}
		if i == 0 || !isSpaceByte(v[i-1]) {
			continue
		}
		after := i + len(string(r))
		if after < len(v) && isSpaceByte(v[after]) {
			j := i
			for j > 0 && isSpaceByte(v[j-1]) {
				j--
			}
			return j
		}
	}
	return -1
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' }

// normalizeDeps turns raw dependency parts into slugs (anchor's rules).
func normalizeDeps(parts []string) []string {
	var out []string
	for _, p := range parts {
		p = strings.TrimSpace(strings.ReplaceAll(p, "`", ""))
		if p == "" || noDependency[strings.ToLower(p)] {
			continue
		}
		if p = depSlug(p); p != "" && !noDependency[strings.ToLower(p)] {
			out = append(out, p)
		}
	}
	return out
}

// depSlug is the slug one dependency names: without a dash note or a
// parenthesised one, a path's folders, or a .md.
func depSlug(p string) string {
	if i := dashNote(p); i >= 0 {
		p = p[:i]
	}
	if i := strings.Index(p, " ("); i >= 0 {
		p = p[:i]
	} else if i := strings.Index(p, "\t("); i >= 0 {
		p = p[:i]
	}
	p = strings.TrimSpace(p)
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = strings.TrimSpace(p[i+1:])
	}
	if strings.HasSuffix(p, ".md") {
		p = strings.TrimSpace(SlugOf(p))
	}
	return p
}

// sectionToken is the first slug-like token of a `## Depends on` bullet.
func sectionToken(s string) string {
	s = strings.TrimLeft(s, " \t`")
	end := 0
	for end < len(s) && slugByte(s[end], end == 0) {
		end++
	}
	return s[:end]
}

// slugByte reports whether c may be in a slug-like token: a letter or a
// digit, or, past the first byte, one of ._/-.
func slugByte(c byte, first bool) bool {
	alnum := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	return alnum || !first && (c == '.' || c == '_' || c == '/' || c == '-')
}

func dedupFold(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		k := strings.ToLower(s)
		if !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

func titleKey(k string) string {
	if k == "" {
		return k
	}
	return strings.ToUpper(k[:1]) + k[1:]
}

func quote(s string) string {
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return "`" + s + "`"
}

// SlugOf returns a plan file name without `.local.md` or `.md`.
func SlugOf(name string) string {
	if s, ok := strings.CutSuffix(name, ".local.md"); ok {
		return s
	}
	return strings.TrimSuffix(name, ".md")
}
