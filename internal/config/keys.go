package config

import "gopkg.in/yaml.v3"

// eachKey hands each key of mapping m and its value to set, in file order,
// and refuses a key set twice with both lines, its error led by prefix
// (the section, like "worktree: "). It stops at set's first error.
func eachKey(m *yaml.Node, prefix string, set func(key, val *yaml.Node) error) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := m.Content[i], m.Content[i+1]
		if first, dup := seen[key.Value]; dup {
			return errorf(key.Line, "%s%s is set twice (first at line %d)", prefix, key.Value, first)
		}
		seen[key.Value] = key.Line
		if err := set(key, val); err != nil {
			return err
		}
	}
	return nil
}
