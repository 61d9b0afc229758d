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
	"time"

	"gopkg.in/yaml.v3"

	"fleetwatch/model"
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
	Line         int // where it is declared in fleetwatch.yaml
}

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
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse reads the settings from a file's bytes; its errors start with the
// line ("3: unknown key ...") for Load to prefix with the file.
func Parse(data []byte) (Settings, error) {
	var s Settings
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
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
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		if first, dup := seen[key.Value]; dup {
			return s, errorf(key.Line, "%s is set twice (first at line %d)", key.Value, first)
		}
		seen[key.Value] = key.Line
		switch key.Value {
		case "integration":
			if val.Kind != yaml.ScalarNode || val.Value == "" {
				return s, errorf(val.Line, "integration: want a branch name, like dev")
			}
			if why := model.CheckBranch(val.Value); why != "" {
				return s, errorf(val.Line, "integration: git refuses branch name %q (%s)", val.Value, why)
			}
			s.Integration = val.Value
		default:
			return s, errorf(key.Line, "unknown key %q (known: integration)", key.Value)
		}
	}
	return s, nil
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
