package main

import (
	"strings"
	"testing"
)

func TestReadCSV(t *testing.T) {
	notes, err := readCSV(strings.NewReader("title,body,tags\nGroceries,\"eggs, milk\",\"home, weekly\"\n"))
	if err != nil || len(notes) != 1 || len(notes[0].Tags) != 2 {
		t.Fatalf("readCSV = %+v, %v; want one note with two tags", notes, err)
	}
	if _, err := readCSV(strings.NewReader("title,body\nok,1\n,2\n")); err == nil || !strings.Contains(err.Error(), "row 3") {
		t.Fatalf("a row without a title: %v, want an error naming row 3", err)
	}
}
