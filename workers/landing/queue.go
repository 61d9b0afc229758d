package landing

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// queueDir holds the queue, its lock and the candidates cache, relative to
// the project.
const queueDir = "var/fleet/queue"

// Entry is one place in the merge queue; the order of the file is the order
// of the queue.
type Entry struct {
	Slug    string    `json:"slug"`
	AddedBy string    `json:"added_by"`
	AddedAt time.Time `json:"added_at"`
	// Hotfix jumps the queue (queue add --hotfix) and never rides in a
	// batch.
	Hotfix bool `json:"hotfix,omitempty"`
	// Bisected is the attempt in which a batch's bisection found this
	// change failing. It counts only while the branch is still at its
	// commit and the stored result on its tree is a failure, so the
	// change stays failed when the integration branch moves on instead of
	// riding, and failing, in every batch after.
	Bisected *Attempt `json:"bisected,omitempty"`
}

// Attempt is a change's commit and the candidate tree it was checked on.
type Attempt struct {
	Commit string `json:"commit"`
	Tree   string `json:"tree"`
}

type queueFile struct {
	Entries []Entry `json:"entries"`
}

// lockQueue takes the queue's lock (a flock beside queue.json, waited for:
// every holder keeps it for a read and a write, never across a landing).
func lockQueue(project string) (func(), error) { return flockRel(project, queueDir+"/queue.lock") }

// flockRel takes an exclusive flock on the file rel under project (created
// if missing, never through a symlink), waiting for it; the func lets go.
func flockRel(project, rel string) (func(), error) { return safepath.Lock(project, rel, 0) }

// readQueue is the queue in order; none when there is no file yet.
func readQueue(project string) ([]Entry, error) {
	f, err := safepath.OpenFile(project, queueDir+"/queue.json", os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var q queueFile
	if err := json.NewDecoder(f).Decode(&q); err != nil {
		return nil, fmt.Errorf("%s: %v (fix or delete it; it only orders the queue)", f.Name(), err)
	}
	return q.Entries, nil
}

func writeQueue(project string, entries []Entry) error {
	dir, err := safepath.OpenDir(project, queueDir, true)
	if err != nil {
		return err
	}
	defer dir.Close()
	if entries == nil {
		entries = []Entry{}
	}
	data, err := json.MarshalIndent(queueFile{Entries: entries}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteAt(dir, "queue.json", append(data, '\n'), 0o644)
}

// editQueue changes the queue under its lock: edit gets the entries and
// returns the new ones, or an error that leaves the file as it was.
func editQueue(project string, edit func([]Entry) ([]Entry, error)) error {
	unlock, err := lockQueue(project)
	if err != nil {
		return err
	}
	defer unlock()
	entries, err := readQueue(project)
	if err != nil {
		return err
	}
	next, err := edit(entries)
	if err != nil {
		return err
	}
	return writeQueue(project, next)
}

func position(entries []Entry, slug string) int {
	for i, e := range entries {
		if e.Slug == slug {
			return i
		}
	}
	return -1
}

// without drops slug and every entry whose plan left review-needed/ (it
// landed, or was sent back by hand).
func without(t *planfs.Tree, entries []Entry, slug string) []Entry {
	out := make([]Entry, 0, len(entries))
	for _, e := range entries {
		if e.Slug != slug && inReview(t, e.Slug) {
			out = append(out, e)
		}
	}
	return out
}

// ErrRefused is a refusal by the queue (exit 2): not a candidate, not
// approved, already queued, an agent landing.
var ErrRefused = errors.New("refused")

func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// reviewRel is slug's plan in review-needed/.
func reviewRel(slug string) string { return string(model.RelOf(model.ReviewNeeded, slug+".md")) }

func inReview(t *planfs.Tree, slug string) bool {
	hits, _ := t.FindSlug(slug, model.ReviewNeeded)
	for _, rel := range hits {
		if rel == reviewRel(slug) {
			return true
		}
	}
	return false
}

// Add appends an approved candidate to the queue; it never takes the
// landing lock.
func Add(t *planfs.Tree, slug string) error { return AddAs(t, slug, "") }

// AddAs is Add recording who queued it.
func AddAs(t *planfs.Tree, slug, by string) error { return add(t, slug, by, false) }

// AddHotfix queues slug ahead of every entry but earlier hotfixes; it
// lands alone, never in a batch.
func AddHotfix(t *planfs.Tree, slug, by string) error { return add(t, slug, by, true) }

func add(t *planfs.Tree, slug, by string, hotfix bool) error {
	if err := writable(t, slug); err != nil {
		return err
	}
	if err := ownBranch(t, slug); err != nil {
		return err
	}
	st, r, err := statusOf(t, slug)
	if err != nil {
		return err
	}
	if err := notQueueable(slug, st, r.integration); err != nil {
		return err
	}
	err = editQueue(t.Project, func(entries []Entry) ([]Entry, error) {
		if position(entries, slug) >= 0 {
			return nil, refused("%s is already queued", slug)
		}
		entries = without(t, entries, "")
		e := Entry{Slug: slug, AddedBy: by, AddedAt: t.Now().UTC(), Hotfix: hotfix}
		at := queuePlace(entries, hotfix)
		return append(entries[:at], append([]Entry{e}, entries[at:]...)...), nil
	})
	if err == nil {
		t.LogEvent(planfs.Event{Event: "queue-add", Slug: slug, AgentID: by, Reason: st.Commit})
		// From here the queue watches the integration branch (moved.go).
		_ = recordBaseline(t.Project, r.integration, r.tip)
	}
	return err
}

// notQueueable refuses to queue slug unless it is in review with a
// branch ahead of integration and a fresh approval.
func notQueueable(slug string, st Status, integration string) error {
	switch {
	case st.Rel == "":
		return refused("%s is not in review-needed/", slug)
	case st.Commit == "":
		return refused("%s has no branch %s", slug, st.Branch)
	case st.Ahead == 0:
		return refused("%s: %s has nothing that is not in %s already", slug, st.Branch, integration)
	case st.Approval == nil:
		return refused("%s is not approved (fleetwatch review %s --approve)", slug, slug)
	case st.Approval.Stale:
		return refused("%s: the approval of %s is stale, the branch moved to %s; review it again", slug, short(st.Approval.Commit), short(st.Commit))
	}
	return nil
}

// queuePlace is where a new entry goes: last, or a hotfix after the
// hotfixes already queued.
func queuePlace(entries []Entry, hotfix bool) int {
	if !hotfix {
		return len(entries)
	}
	at := 0
	for at < len(entries) && entries[at].Hotfix {
		at++
	}
	return at
}

// Remove takes slug out of the queue.
func Remove(t *planfs.Tree, slug string) error { return RemoveAs(t, slug, "") }

// RemoveAs is Remove recording who removed it.
func RemoveAs(t *planfs.Tree, slug, by string) error {
	if err := writable(t, slug); err != nil {
		return err
	}
	err := editQueue(t.Project, func(entries []Entry) ([]Entry, error) {
		if position(entries, slug) < 0 {
			return nil, fmt.Errorf("%w: %s is not queued", ErrNotQueued, slug)
		}
		return without(t, entries, slug), nil
	})
	if err == nil {
		t.LogEvent(planfs.Event{Event: "queue-remove", Slug: slug, AgentID: by})
	}
	return err
}

// ErrNotQueued means the slug has no place in the queue (exit 1).
var ErrNotQueued = errors.New("not queued")

// dequeue drops slug (and entries whose plan is gone) after a landing.
func dequeue(t *planfs.Tree, slug string) error {
	return editQueue(t.Project, func(entries []Entry) ([]Entry, error) {
		return without(t, entries, slug), nil
	})
}
