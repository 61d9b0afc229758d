package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// importCSV adds every row of a CSV file with a header row, or none.
func importCSV(store *Store, path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		notes, err := readCSV(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, n := range notes {
			store.Add(n)
		}
		if err := store.Save(path); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, http.StatusCreated, map[string]int{"imported": len(notes)})
	}
}

// readCSV reads notes from CSV with a header row; unknown columns are
// ignored, a missing title column or an empty title is an error.
func readCSV(r io.Reader) ([]Note, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("empty file")
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[strings.ToLower(strings.TrimSpace(name))] = i
	}
	title, ok := col["title"]
	if !ok {
		return nil, fmt.Errorf("no title column")
	}
	var notes []Note
	for i, row := range rows[1:] {
		n := Note{Title: strings.TrimSpace(row[title])}
		if n.Title == "" {
			return nil, fmt.Errorf("row %d: no title", i+2)
		}
		if c, ok := col["body"]; ok {
			n.Body = row[c]
		}
		if c, ok := col["tags"]; ok {
			for _, tag := range strings.Split(row[c], ",") {
				if tag = strings.TrimSpace(tag); tag != "" {
					n.Tags = append(n.Tags, tag)
				}
			}
		}
		notes = append(notes, n)
	}
	return notes, nil
}
