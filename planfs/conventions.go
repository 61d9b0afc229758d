package planfs

// The conventions file sits in the project root, beside .plans/, not in it.
// It lives here rather than in workers because scaffold creates it with the
// tree and the same readers (status, the UI) show it with the tree; nothing
// in it concerns how a worker runs.

import (
	"errors"
	"fmt"
	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ConventionsFiles are where anchor keeps a project's conventions, in the
// order they are read; the first that names an orchestrator wins.
var ConventionsFiles = []string{".anchor/conventions.md", "ANCHOR-CONVENTIONS.md"}

// DefaultOrchestrator is what scaffold writes, as anchor's docs suggest.
const DefaultOrchestrator = "claude:opus"

const orchestratorKey = "**Preferred orchestrator:**"

const conventionsTemplate = `# Project conventions

` + orchestratorKey + " `%s`" + `

The orchestrator plans, coordinates and checks dependencies across plans; the
pull workers (` + "`fleetwatch watch`" + `) never take that role. Change it with
` + "`fleetwatch orchestrator --set platform:model`" + `.
`

// Orchestrator returns the project's preferred orchestrator and the file
// that names it; both are "" when no file does.
func Orchestrator(project string) (value, file string, err error) {
	for _, name := range ConventionsFiles {
		p := filepath.Join(project, filepath.FromSlash(name))
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("cannot read %s: %v", p, errText(err))
		}
		for _, line := range strings.Split(string(data), "\n") {
			if _, v, ok := cutKey(line); ok {
				if v = orchestratorValue(v); v != "" {
					return v, p, nil
				}
			}
		}
	}
	return "", "", nil
}

// cutKey splits a line at the orchestrator key, any case.
func cutKey(line string) (before, after string, ok bool) {
	i := strings.Index(strings.ToLower(line), strings.ToLower(orchestratorKey))
	if i < 0 {
		return "", "", false
	}
	return line[:i], line[i+len(orchestratorKey):], true
}

// orchestratorValue reads `claude:opus` from "` `claude:opus`   # note`".
func orchestratorValue(v string) string {
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(v), "`"))
}

// ValidOrchestrator checks a value for --set: one line, no backticks, like
// claude:opus or local:qwen3.
func ValidOrchestrator(v string) error {
	if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "`\r\n") || strings.Contains(v, " #") || len(v) > 200 {
		return fmt.Errorf("%q is not an orchestrator like claude:opus", v)
	}
	return nil
}

// SetOrchestrator records value as the project's preferred orchestrator:
// it rewrites the line where a conventions file names one, else adds the
// line to the first conventions file there is, else creates
// ANCHOR-CONVENTIONS.md. It returns the file it wrote.
func SetOrchestrator(project, value string) (string, error) {
	if err := ValidOrchestrator(value); err != nil {
		return "", err
	}
	value = strings.TrimSpace(value)
	_, named, err := Orchestrator(project)
	if err != nil {
		return "", err
	}
	target := named
	if target == "" {
		target = firstConventionsFile(project)
	}
	if target == "" {
		p := filepath.Join(project, "ANCHOR-CONVENTIONS.md")
		return p, writeFileAtomic(project, p, fmt.Sprintf(conventionsTemplate, value))
	}
	data, err := os.ReadFile(target)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", target, errText(err))
	}
	return target, writeFileAtomic(project, target, withOrchestrator(string(data), value))
}

// firstConventionsFile is the first of ConventionsFiles project has, or "".
func firstConventionsFile(project string) string {
	for _, name := range ConventionsFiles {
		p := filepath.Join(project, filepath.FromSlash(name))
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// withOrchestrator is a conventions file's text naming value as the
// orchestrator: on the line that names one, else on a line with the key
// and no value, else on a line added at the end.
func withOrchestrator(text, value string) string {
	lines := strings.Split(text, "\n")
	at := -1
	for i, line := range lines {
		if _, after, ok := cutKey(line); ok && (at < 0 || orchestratorValue(after) != "") {
			at = i
			if orchestratorValue(after) != "" {
				break
			}
		}
	}
	if at >= 0 {
		before, _, _ := cutKey(lines[at])
		lines[at] = before + orchestratorKey + " `" + value + "`"
		return strings.Join(lines, "\n")
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + "\n" + orchestratorKey + " `" + value + "`\n"
}

// ensureConventions creates ANCHOR-CONVENTIONS.md with the default
// orchestrator when the project has no conventions file at all; a file the
// project already has is left as it is. It returns the path it created.
func ensureConventions(project string) (string, error) {
	for _, name := range ConventionsFiles {
		if _, err := os.Lstat(filepath.Join(project, filepath.FromSlash(name))); err == nil {
			return "", nil
		}
	}
	p := filepath.Join(project, "ANCHOR-CONVENTIONS.md")
	return p, writeFileAtomic(project, p, fmt.Sprintf(conventionsTemplate, DefaultOrchestrator))
}

// writeFileAtomic replaces p (a file in project) whole, keeping its
// permissions. Its folder is reached without a symlink (a committed
// `.anchor -> elsewhere` must not take the write out of the project); a
// symlink at p itself is replaced, not followed.
func writeFileAtomic(project, p, text string) error {
	rel, err := filepath.Rel(project, p)
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", p, err)
	}
	d, err := safepath.OpenDir(project, filepath.Dir(rel), true)
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", p, err)
	}
	defer d.Close()
	if err := atomicfile.WriteAt(d, filepath.Base(rel), []byte(text), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %v", p, errText(err))
	}
	return nil
}
