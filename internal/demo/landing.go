package demo

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"fleetwatch/landing"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// fleetwatchYAML is jotter's fleetwatch.yaml: where work lands and what it
// must pass first.
const fleetwatchYAML = `# jotter's settings for fleetwatch: finished work lands on dev, once a person
# approved it and these checks passed on the exact tree that lands.
integration: dev
checks:
  - name: vet
    run: [go, vet, ./...]
    timeout: 5m
  - name: test
    run: [go, test, ./...]
    timeout: 10m
    expect_output: "^ok"
queue:
  depth: 2
`

// routesEnd is the line of main.go new routes go above; csv-import and
// archive-notes both add theirs there, so the second to land conflicts.
const routesEnd = "\tlog.Println(\"jotter listening on :8080\")\n"

// landingQueue is the rest of the work's life: three finished changes on
// their feature branches, one peer-reviewed, approved and first in the merge
// queue, one approved and queued behind it, one a peer sent back.
func (b *builder) landingQueue() {
	b.writeApp(map[string]string{"fleetwatch.yaml": fleetwatchYAML})
	b.commit(19*time.Hour, alice, "fleetwatch.yaml: land on dev after vet and test")

	csv := b.change("reasoner-1", "csv-import", 2*day-5*time.Hour-10*time.Minute,
		map[string]string{"import.go": importGo, "import_test.go": importTest},
		`mux.HandleFunc("POST /api/import", importCSV(store, path))`, "Import notes from a CSV file")
	b.review("csv-import", csv, "ACCEPT", 18*time.Hour, "- All or nothing holds: rows are parsed before any note is added.\n- The row numbers in errors count the header, as a spreadsheet does.\n")
	b.approve("csv-import", csv, 17*time.Hour)

	b.finish("features/archive-notes.md", "mid-2", 15*time.Hour)
	arch := b.change("mid-2", "archive-notes", 15*time.Hour+10*time.Minute,
		map[string]string{"archive.go": archiveGo},
		`mux.HandleFunc("POST /api/notes/{id}/archive", archiveNote(store, path))`, "Archive a note: out of the list, kept on disk")
	b.finish("features/word-count.md", "reasoner-1", 8*time.Hour)
	wc := b.change("reasoner-1", "word-count", 8*time.Hour+10*time.Minute,
		map[string]string{"wordcount.go": wordCountGo}, "", "Word count for each note")
	b.review("word-count", wc, "REVISE", 5*time.Hour, "- Words() counts `don't` as two words; split on spaces only.\n- No test: add one for an empty body.\n")
	b.approve("archive-notes", arch, 4*time.Hour)
	if b.err == nil {
		b.at(3 * time.Hour)
		b.fail("queue csv-import", landing.AddAs(b.tree, "csv-import", "alice"))
		b.at(150 * time.Minute)
		b.fail("queue archive-notes", landing.AddAs(b.tree, "archive-notes", "alice"))
	}
	b.commit(140*time.Minute, alice, "Plans: csv-import and archive-notes approved and queued, word-count sent a review")
}

// finish is an agent claiming a ready plan and handing it to review.
func (b *builder) finish(rel, agentID string, ago time.Duration) {
	held := b.claim(rel, agentID, ago+time.Hour, planfs.DefaultTTL)
	b.complete(held, model.ReviewNeeded, agentID, ago)
}

// change commits files, and a route above routesEnd in main.go, on the
// plan's feature branch in agentID's worktree, and returns the commit.
func (b *builder) change(agentID, slug string, ago time.Duration, files map[string]string, route, msg string) string {
	if b.err != nil {
		return ""
	}
	wt, err := workers.Ensure(b.project, agentID, slug)
	if err != nil {
		b.fail("worktree for "+slug, err)
		return ""
	}
	if route != "" {
		main := filepath.Join(wt.Path, "main.go")
		text, err := os.ReadFile(main)
		if err == nil && !strings.Contains(string(text), routesEnd) {
			err = os.ErrInvalid
		}
		if err != nil {
			b.fail("routes of "+slug, err)
			return ""
		}
		files["main.go"] = strings.Replace(string(text), routesEnd, "\t"+route+"\n"+routesEnd, 1)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(wt.Path, name), []byte(ticks(text)), 0o644); err != nil {
			b.fail("change "+slug, err)
			return ""
		}
	}
	b.gitIn(wt.Path, ago, agent(agentID), "add", "-A")
	b.gitIn(wt.Path, ago, agent(agentID), "commit", "-q", "-m", msg)
	tip, err := builderGit(wt.Path, "rev-parse", "HEAD")
	b.fail("commit of "+slug, err)
	return tip
}

// review stores a peer's verdict on commit, as `review --peer` does.
func (b *builder) review(slug, commit, verdict string, ago time.Duration, findings string) {
	if b.err != nil {
		return
	}
	base, err := builderGit(b.project, "merge-base", "refs/heads/dev", commit)
	if err != nil {
		b.fail("review of "+slug, err)
		return
	}
	b.at(ago)
	_, err = b.tree.WriteReview(planfs.ReviewFile{Slug: slug, Commit: commit, Reviewer: "reasoner-2",
		Endpoint: "cloud-reasoner", Base: base, Verdict: verdict, At: b.now.Add(-ago)}, []byte(findings))
	b.fail("review of "+slug, err)
}

// approve is alice's approve of commit.
func (b *builder) approve(slug, commit string, ago time.Duration) {
	if b.err != nil {
		return
	}
	b.at(ago)
	_, err := b.tree.WriteApproval(slug, commit, planfs.Agent("alice"))
	b.fail("approve "+slug, err)
}

const importGo = `package main

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
`

const importTest = `package main

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
`

const archiveGo = `package main

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
`

const wordCountGo = `package main

import "strings"

// Words is how many words the note's body has.
func (n Note) Words() int {
	return len(strings.FieldsFunc(n.Body, func(r rune) bool { return r == ' ' || r == '\'' }))
}
`
