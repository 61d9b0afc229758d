// Command jotter serves a small notes web app.
package main

import (
	"cmp"
	"encoding/json"
	"log"
	"net/http"
	"os"
)

func main() {
	path := cmp.Or(os.Getenv("JOTTER_DATA"), "notes.json")
	store := &Store{}
	if err := store.Load(path); err != nil {
		log.Fatalf("jotter: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServer(http.Dir("web")))
	mux.HandleFunc("GET /api/notes", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, store.List())
	})
	mux.HandleFunc("POST /api/notes", func(w http.ResponseWriter, r *http.Request) {
		var n Note
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n = store.Add(n)
		if err := store.Save(path); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		log.Printf("added %q", n.Preview())
		writeJSON(w, http.StatusCreated, n)
	})
	log.Println("jotter listening on :8080")
	log.Fatal(http.ListenAndServe(":8080", mux))
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
