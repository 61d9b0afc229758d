package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
)

// Load reads the notes saved at path; a missing file means no notes yet.
func (s *Store) Load(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := json.Unmarshal(data, &s.notes); err != nil {
		return err
	}
	for _, n := range s.notes {
		s.next = max(s.next, n.ID)
	}
	return nil
}

// Save writes every note to path through a temp file, so a crash never
// leaves half a file.
func (s *Store) Save(path string) error {
	s.mu.Lock()
	data, err := json.MarshalIndent(s.notes, "", "  ")
	s.mu.Unlock()
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
