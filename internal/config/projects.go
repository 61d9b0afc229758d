package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ProjectsName is the user's list of projects for a cockpit over several,
// in the user's config folder (ProjectsFile).
const ProjectsName = "projects.yaml"

// Project is one entry of projects.yaml: a name for the overview and the
// project's root, absolute. Whether the root exists is not checked here:
// the cockpit shows a missing one as a problem row.
type Project struct {
	Name, Root string
	Line       int // the entry's line in the file
}

// ProjectsFile is where projects.yaml is: $XDG_CONFIG_HOME/fleetwatch/,
// else ~/.config/fleetwatch/. A relative XDG_CONFIG_HOME is ignored, as
// the XDG spec says.
func ProjectsFile() (string, error) {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "fleetwatch", ProjectsName), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home folder for %s: %v", ProjectsName, err)
	}
	return filepath.Join(home, ".config", "fleetwatch", ProjectsName), nil
}

// LoadProjects reads the projects file at path. A bad entry is one line
// naming the file and the line; a missing file is fs.ErrNotExist, wrapped.
func LoadProjects(path string) ([]Project, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("%s: %v", path, errText(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, errText(err))
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	home, _ := os.UserHomeDir()
	ps, err := ParseProjects(data, filepath.Dir(path), home)
	if err != nil {
		return nil, fmt.Errorf("%s:%v", path, err)
	}
	return ps, nil
}

// ParseProjects reads projects.yaml's bytes:
//
//	projects:
//	  - name: api          # optional: the root's folder name
//	    root: ~/src/api    # ~ is home; a relative root is from dir
//
// Its errors start with the line, for LoadProjects to prefix the file.
func ParseProjects(data []byte, dir, home string) ([]Project, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			return nil, errorf(n, "%s", m[2])
		}
		return nil, errorf(1, "%v", err)
	}
	if len(doc.Content) == 0 {
		return nil, errorf(1, "no projects: want projects: [{name: api, root: ~/src/api}, …]")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode || len(root.Content) != 2 || root.Content[0].Value != "projects" {
		return nil, errorf(root.Line, "want one key, projects: a list of {name, root}")
	}
	list := root.Content[1]
	if list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		return nil, errorf(list.Line, "projects: want a list of {name, root}, like - {name: api, root: ~/src/api}")
	}
	var out []Project
	names := map[string]int{}
	for _, e := range list.Content {
		p, err := parseProject(e, dir, home)
		if err != nil {
			return nil, err
		}
		if first, dup := names[p.Name]; dup {
			return nil, errorf(e.Line, "projects: name %q is used twice (first at line %d)", p.Name, first)
		}
		names[p.Name] = e.Line
		out = append(out, p)
	}
	return out, nil
}

// parseProject reads one entry: a mapping with root and, optionally, name.
func parseProject(e *yaml.Node, dir, home string) (Project, error) {
	p := Project{Line: e.Line}
	if e.Kind != yaml.MappingNode {
		return p, errorf(e.Line, "projects: want an entry like {name: api, root: ~/src/api}")
	}
	for i := 0; i+1 < len(e.Content); i += 2 {
		k, v := e.Content[i], e.Content[i+1]
		if v.Kind != yaml.ScalarNode || strings.TrimSpace(v.Value) == "" || strings.ContainsAny(v.Value, "\x00\n") {
			return p, errorf(v.Line, "projects: %s: want one line of text", k.Value)
		}
		switch k.Value {
		case "name":
			p.Name = v.Value
		case "root":
			p.Root = expandRoot(v.Value, dir, home)
		default:
			return p, errorf(k.Line, "projects: unknown key %q (known: name, root)", k.Value)
		}
	}
	if p.Root == "" {
		return p, errorf(e.Line, "projects: an entry without root (the project's folder)")
	}
	if p.Name == "" {
		p.Name = filepath.Base(p.Root)
	}
	return p, nil
}

// expandRoot makes a root absolute: ~ is home, relative is from dir.
func expandRoot(root, dir, home string) string {
	switch {
	case root == "~":
		root = home
	case strings.HasPrefix(root, "~/"):
		root = filepath.Join(home, root[2:])
	case !filepath.IsAbs(root):
		root = filepath.Join(dir, root)
	}
	return filepath.Clean(root)
}
