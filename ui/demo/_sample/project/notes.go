package main

import (
	"strings"
	"sync"
	"time"
)

// Note is one note.
type Note struct {
	ID      int       `json:"id"`
	Title   string    `json:"title"`
	Body    string    `json:"body"`
	Tags    []string  `json:"tags,omitempty"`
	Updated time.Time `json:"updated"`
}

// Preview is how the note reads in the server log.
func (n Note) Preview() string {
	return strings.ToUpper(n.Title[:1]) + n.Title[1:]
}

// Store holds every note.
type Store struct {
	mu    sync.Mutex
	next  int
	notes []Note
}

// Add stores n and returns it with its id.
func (s *Store) Add(n Note) Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	n.ID, n.Updated = s.next, time.Now()
	s.notes = append(s.notes, n)
	return n
}

// List returns every note, newest first.
func (s *Store) List() []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Note, len(s.notes))
	for i, n := range s.notes {
		out[len(out)-1-i] = n
	}
	return out
}
