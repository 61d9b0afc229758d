package model

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// NewPlan is what the operator says about a plan before it exists: the
// header fields `new` and the UI's form write.
type NewPlan struct {
	Slug, Title     string
	Lane            Lane   // drafts when empty
	Value, Priority string // medium and P2 when empty
	Preferred       []string
	DependsOn       []string
	Local           bool // a private <slug>.local.md
	// Goal and DoneWhen fill the template's Goal section and its Done when
	// section (one bullet each); left out, the template's text stays.
	Goal     string
	DoneWhen []string
	// Unedited is set when no editor opens the plan once it is written: a
	// ready lane's plan must then say its goal and when it is done.
	Unedited bool
}

// NewPlanLanes are the lanes a new plan may start in: drafts, or a ready
// lane when it already passes promote's checks.
func NewPlanLanes() []Lane { return append([]Lane{Drafts}, RuleOf(Promote).To...) }

// Name is the plan's file name.
func (n NewPlan) Name() string {
	if n.Local {
		return n.Slug + ".local.md"
	}
	return n.Slug + ".md"
}

// Normalized fills in the defaults and spells Value and Priority as the
// header reads them back (`p1` → P1).
func (n NewPlan) Normalized() NewPlan {
	n.Slug, n.Title = strings.TrimSpace(n.Slug), strings.TrimSpace(n.Title)
	if n.Lane == "" {
		n.Lane = Drafts
	}
	n.Value = strings.ToLower(strings.TrimSpace(n.Value))
	if n.Value == "" {
		n.Value = "medium"
	}
	if p := strings.TrimSpace(n.Priority); p == "" {
		n.Priority = "P2"
	} else if norm, ok := parsePriority(p); ok && len(strings.TrimPrefix(strings.ToUpper(p), "P")) == 1 {
		n.Priority = norm
	}
	n.Preferred = cleanList(n.Preferred)
	n.Goal, n.DoneWhen = strings.TrimSpace(n.Goal), cleanList(n.DoneWhen)
	n.DependsOn = dedupFold(normalizeDeps(n.DependsOn))
	return n
}

func cleanList(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return dedupFold(out)
}

// SplitList reads a comma list as the form and --models/--depends give it.
func SplitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// CheckSlug says why slug cannot name a new plan file, or nil: it must be a
// plain file name a lane can hold, not one the scan would read as another
// slug.
func CheckSlug(slug string) error {
	bad := func(why string) error { return fmt.Errorf("bad slug: %s (want a plan name like fix-login)", why) }
	lower := strings.ToLower(slug)
	switch {
	case slug == "":
		return errors.New("no slug: name the plan, like fix-login")
	case strings.ContainsAny(slug, `/\`):
		return bad("a slug is a file name, not a path")
	case strings.HasPrefix(slug, "."):
		return bad("a leading dot hides the file")
	case strings.HasSuffix(lower, ".md") || strings.HasSuffix(lower, ".local"):
		return bad("leave out .md and .local; --local makes a private plan")
	case strings.ContainsFunc(slug, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar }):
		return bad("no spaces or control characters")
	case lower == "readme":
		return bad("README.md is not a plan")
	case len(slug) > 200:
		return bad("longer than 200 bytes")
	}
	return nil
}

// Check says, in one line naming the field, what makes n unwritable; n is
// Normalized first. Lanes beyond drafts are checked by the writer, which
// applies promote's checks to the text it writes.
func (n NewPlan) Check() error {
	if err := CheckSlug(n.Slug); err != nil {
		return err
	}
	if n.Title == "" {
		return errors.New("empty title: say in a few words what the plan is for")
	}
	if !allowedLane(n.Lane) {
		return fmt.Errorf("lane: a new plan goes to %s, not %q", Alternatives(NewPlanLanes()), n.Lane)
	}
	if n.Value != "high" && n.Value != "medium" && n.Value != "low" {
		return fmt.Errorf("value: high, medium or low, not %q", n.Value)
	}
	if n.Priority != "P1" && n.Priority != "P2" && n.Priority != "P3" {
		return fmt.Errorf("priority: P1, P2 or P3, not %q", n.Priority)
	}
	if err := n.checkHeaderText(); err != nil {
		return err
	}
	return n.checkSectionText()
}

// checkHeaderText refuses a header value that would read back otherwise:
// a control character, or ` #`, which starts a comment.
func (n NewPlan) checkHeaderText() error {
	fields := map[string][]string{"title": {n.Title}, "preferred models": n.Preferred, "depends on": n.DependsOn}
	for _, name := range []string{"title", "preferred models", "depends on"} {
		for _, v := range fields[name] {
			if strings.ContainsFunc(v, unicode.IsControl) || strings.Contains(v, " #") || strings.Contains(v, "\t#") {
				return fmt.Errorf("%s: %q holds a control character or ` #` (which starts a comment)", name, v)
			}
		}
	}
	return nil
}

// checkSectionText refuses a Goal or Done when line that would break its
// section: a line break, or a leading # (a heading).
func (n NewPlan) checkSectionText() error {
	for _, v := range append([]string{n.Goal}, n.DoneWhen...) {
		if strings.ContainsFunc(v, unicode.IsControl) || strings.HasPrefix(v, "#") {
			return fmt.Errorf("goal or done when: %q holds a line break or starts with # (a heading)", v)
		}
	}
	return nil
}

func allowedLane(l Lane) bool {
	for _, a := range NewPlanLanes() {
		if a == l {
			return true
		}
	}
	return false
}

// builtinTemplate is the body when the project has no plan template of its
// own: anchor's sections.
const builtinTemplate = `# {{title}}

- **Value:** medium
- **Priority:** P2
- **Preferred models:**
- **Depends on:** none

## Goal

## Context

## Steps

1.

## Done when

-
`

// BuiltinTemplate is the plan template used when the project has none.
func BuiltinTemplate() string { return builtinTemplate }

// headerOrder is the bullets a new plan's header sets, in the order they
// are added when the template lacks them.
var headerOrder = []string{keyValue, keyPriority, keyPreferred, keyDepends}

// Render fills a template with n (Normalized): the first `# ` line becomes
// the title, the first bullet of each field it sets takes its value, missing
// ones are added under the title, and {{title}} and {{slug}} are replaced.
// ParseHeader reads back exactly n's fields.
func (n NewPlan) Render(template string) string {
	values := map[string]string{
		keyValue: n.Value, keyPriority: n.Priority,
		keyPreferred: strings.Join(n.Preferred, ", "), keyDepends: strings.Join(n.DependsOn, ", "),
	}
	if values[keyDepends] == "" {
		values[keyDepends] = "none"
	}
	text := strings.NewReplacer("{{title}}", n.Title, "{{slug}}", n.Slug).Replace(template)
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	lines = n.withHeader(lines, values)
	if n.Goal != "" {
		lines = fillSection(lines, []string{"goal"}, "Goal", []string{n.Goal})
	}
	if len(n.DoneWhen) > 0 {
		items := make([]string, len(n.DoneWhen))
		for i, d := range n.DoneWhen {
			items[i] = "- " + d
		}
		lines = fillSection(lines, []string{"done when", "acceptance"}, "Done when", items)
	}
	out := strings.Join(lines, "\n")
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out
}

// withHeader sets the template's title line and the first bullet of each
// field in values, and adds the fields it lacks (and the title, if none)
// at the top.
func (n NewPlan) withHeader(lines []string, values map[string]string) []string {
	done := map[string]bool{}
	titleAt := -1
	for i, line := range lines {
		if titleAt < 0 && strings.HasPrefix(line, "# ") {
			lines[i], titleAt = "# "+n.Title, i
			continue
		}
		body := strings.TrimLeft(line, " \t")
		key, _, ok := boldField(body)
		if v, set := values[key]; ok && set && !done[key] {
			done[key] = true
			lines[i] = strings.TrimRight(line[:len(line)-len(body)]+"- **"+fieldName(key)+":** "+v, " ")
		}
	}
	var missing []string
	for _, k := range headerOrder {
		if !done[k] {
			missing = append(missing, strings.TrimRight("- **"+fieldName(k)+":** "+values[k], " "))
		}
	}
	if titleAt < 0 {
		lines = append([]string{"# " + n.Title, ""}, lines...)
		titleAt = 0
	}
	if len(missing) > 0 {
		add := append([]string{""}, missing...)
		lines = append(lines[:titleAt+1], append(add, lines[titleAt+1:]...)...)
	}
	return lines
}

func fieldName(key string) string {
	if key == keyPreferred {
		return "Preferred models"
	}
	if key == keyDepends {
		return "Depends on"
	}
	return titleKey(key)
}

// fillSection makes body the text of the first section whose heading starts
// with one of prefixes (lower case), or adds a `## name` section at the end.
func fillSection(lines, prefixes []string, name string, body []string) []string {
	at, end := sectionSpan(lines, prefixes)
	if at < 0 {
		for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
			lines = lines[:len(lines)-1]
		}
		return append(append(lines, "", "## "+name, ""), append(body, "")...)
	}
	filled := append(append([]string{""}, body...), "")
	return append(append(lines[:at+1:at+1], filled...), lines[end:]...)
}

// sectionSpan finds the first heading (level 2 or deeper) that starts with
// one of prefixes and the next heading of its level or above (len(lines)
// when none); at is -1 when there is no such section.
func sectionSpan(lines, prefixes []string) (at, end int) {
	at, level := -1, 0
	for i, line := range lines {
		if l, title, ok := heading(line); ok && l >= 2 && hasAnyPrefix(strings.ToLower(title), prefixes) {
			at, level = i, l
			break
		}
	}
	if at < 0 {
		return -1, len(lines)
	}
	for j := at + 1; j < len(lines); j++ {
		if l, _, ok := heading(lines[j]); ok && l <= level {
			return at, j
		}
	}
	return at, len(lines)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
