package main

import (
	"net/http"
	"strconv"
)

// archiveNote takes a note out of the list.
func archiveNote(store *Store, path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil {
			http.Error(w, "bad note id", http.StatusBadRequest)
			return
		}
		if !store.Archive(id) {
			http.NotFound(w, r)
			return
		}
		if err := store.Save(path); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// Archive takes note id out of the list and reports whether there was one.
func (s *Store) Archive(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range s.notes {
		if n.ID == id {
			s.notes = append(s.notes[:i], s.notes[i+1:]...)
			return true
		}
	}
	return false
}
