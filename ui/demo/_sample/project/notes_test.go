package main

import "testing"

func TestListNewestFirst(t *testing.T) {
	var s Store
	s.Add(Note{Title: "first"})
	s.Add(Note{Title: "second"})
	got := s.List()
	if len(got) != 2 || got[0].Title != "second" {
		t.Fatalf("List() = %+v", got)
	}
}
