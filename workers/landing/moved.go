package landing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// The queue's only write to the integration branch is its compare-and-swap,
// so it knows where it left the branch: var/fleet/queue/integration.json
// holds the commit it last set (or, before its first landing, the tip it
// found when something was first queued). A branch anywhere else was moved
// by someone else (a person's push, an agent's `git update-ref`), and every
// face says so: `check` exits 1, `queue list` prints a line, `queue land`
// warns, and the event log gets one integration-moved event naming the old
// and new commits. Every such move counts, a fast-forward too: an agent
// that commits straight onto the branch makes exactly that move. The
// notice stays until the next landing sets the branch again, so a person
// who moved it on purpose says so with Accept (`queue accept`, the Merge
// pane's a), or lands, or moves it back.

const integrationFile = queueDir + "/integration.json"

// integrationRecord is integration.json.
type integrationRecord struct {
	Branch string `json:"branch"`
	Commit string `json:"commit"` // the commit the queue last set
	// Noticed is the foreign tip whose move was already logged, so each
	// move is one event however often it is read.
	Noticed string `json:"noticed,omitempty"`
}

func readIntegrationRecord(project string) (integrationRecord, bool) {
	f, err := safepath.OpenFile(project, integrationFile, os.O_RDONLY, 0)
	if err != nil {
		return integrationRecord{}, false
	}
	defer f.Close()
	var rec integrationRecord
	data, err := io.ReadAll(io.LimitReader(f, 1<<16))
	if err != nil || json.Unmarshal(data, &rec) != nil || !treeID.MatchString(rec.Commit) {
		return integrationRecord{}, false
	}
	return rec, true
}

func writeIntegrationRecord(project string, rec integrationRecord) error {
	dir, err := safepath.OpenDir(project, queueDir, true)
	if err != nil {
		return err
	}
	defer dir.Close()
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteAt(dir, "integration.json", append(data, '\n'), 0o644)
}

// editIntegrationRecord changes the record under the queue's lock; edit
// gets the record (ok false when there is none) and says whether to write.
func editIntegrationRecord(project string, edit func(rec integrationRecord, ok bool) (integrationRecord, bool)) error {
	unlock, err := lockQueue(project)
	if err != nil {
		return err
	}
	defer unlock()
	rec, ok := readIntegrationRecord(project)
	next, write := edit(rec, ok)
	if !write {
		return nil
	}
	return writeIntegrationRecord(project, next)
}

// recordSet records that the queue set branch to commit.
func recordSet(project, branch, commit string) error {
	return editIntegrationRecord(project, func(integrationRecord, bool) (integrationRecord, bool) {
		return integrationRecord{Branch: branch, Commit: commit}, true
	})
}

// recordBaseline records tip as where the queue found branch, when nothing
// is recorded for it yet.
func recordBaseline(project, branch, tip string) error {
	return editIntegrationRecord(project, func(rec integrationRecord, ok bool) (integrationRecord, bool) {
		// A record of another branch stays: the working tree naming a new
		// integration branch is itself a notice, until a landing on it.
		return integrationRecord{Branch: branch, Commit: tip}, !ok
	})
}

// movedOutside is the notice when the integration branch is not where the
// queue left it, "" when it is (or nothing is recorded yet).
func (r *repo) movedOutside() (string, integrationRecord) {
	rec, ok := readIntegrationRecord(r.project)
	if ok && rec.Branch != r.integration {
		// The branch's name comes from the working tree, which anyone
		// who can write the project can edit.
		return fmt.Sprintf("%s names %s as the integration branch, but the queue last landed on %s (at %s); the next landing takes %s",
			config.File, r.integration, rec.Branch, short(rec.Commit), r.integration), rec
	}
	if !ok || rec.Commit == r.tip || r.tip == "" {
		return "", rec
	}
	return fmt.Sprintf("refs/heads/%s moved outside the queue: the queue left it at %s, it is at %s now (git log %s..%s shows what came in); the next landing takes it as it is",
		r.integration, short(rec.Commit), short(r.tip), short(rec.Commit), short(r.tip)) + acceptHint, rec
}

// acceptHint ends a move's notice with what stops it.
const acceptHint = "; if that was you, fleetwatch queue accept takes it as your own"

// EventAccepted is the event Accept logs: a person took the integration
// branch's tip as their own move.
const EventAccepted = "integration-accepted"

// ErrNothingToAccept is Accept's answer when the integration branch is
// where the queue left it (exit 1).
var ErrNothingToAccept = errors.New("nothing to accept")

// commitPrefix is a commit id as a person copies it: four hex digits or
// more.
var commitPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{4,64}$`) })

// Accepted is what Accept took as the operator's own: Branch moved from
// From (where the queue left it) to To.
type Accepted struct{ Branch, From, To string }

// Accept records the integration branch's tip as where the queue left it:
// a person says a move outside the queue was theirs (settings or plan
// moves committed on the branch), so the notice stops until the next move
// nobody explained. expect, when not "", is the tip the person looked at
// (a prefix of it will do): a branch that moved again since is refused.
func Accept(t *planfs.Tree, expect, actor string) (Accepted, error) {
	if err := writable(t, integrationFile); err != nil {
		return Accepted{}, err
	}
	r, err := readRepo(t.Project)
	if err != nil {
		return Accepted{}, err
	}
	why, rec := r.movedOutside()
	a := Accepted{Branch: r.integration, From: rec.Commit, To: r.tip}
	switch {
	case why == "":
		return a, fmt.Errorf("%w: %s is where the queue left it (%s)", ErrNothingToAccept, r.integration, short(r.tip))
	case expect != "" && !commitPrefix().MatchString(expect):
		return a, refused("%q is not a commit id: give the tip's id (%s)", expect, short(r.tip))
	case expect != "" && !strings.HasPrefix(r.tip, expect):
		return a, refused("%s moved again: it is at %s, not %s; look at git log %s..%s, then accept again", r.integration, short(r.tip), expect, short(rec.Commit), short(r.tip))
	}
	err = editIntegrationRecord(t.Project, func(now integrationRecord, ok bool) (integrationRecord, bool) {
		return integrationRecord{Branch: r.integration, Commit: r.tip}, true
	})
	if err != nil {
		return a, err
	}
	t.LogEvent(planfs.Event{Event: EventAccepted, From: rec.Commit, To: r.tip, AgentID: actor, Reason: "refs/heads/" + r.integration + " accepted as the operator's own move"})
	return a, nil
}

// noticeMove is movedOutside, logging the move's event once when the tree
// is writable.
func (r *repo) noticeMove(t *planfs.Tree) string {
	why, rec := r.movedOutside()
	if why == "" || rec.Noticed == r.tip || t.Writable() != nil {
		return why
	}
	logged := false
	_ = editIntegrationRecord(r.project, func(now integrationRecord, ok bool) (integrationRecord, bool) {
		// Another reader may have logged it, or a landing recorded a new
		// commit, since we looked.
		if !ok || now != rec {
			return now, false
		}
		now.Noticed = r.tip
		logged = true
		return now, true
	})
	if logged {
		reason := "refs/heads/" + r.integration + " moved outside the queue"
		if rec.Branch != r.integration {
			reason = config.File + " names " + r.integration + " as the integration branch, the queue last landed on " + rec.Branch
		}
		t.LogEvent(planfs.Event{Event: "integration-moved", From: rec.Commit, To: r.tip, Reason: reason})
	}
	return why
}

// Notices are the lines every face shows about the landing gate itself,
// read without writing anything: the working tree declaring other checks
// than the integration branch's, and the integration branch moved outside
// the queue. None for a project with no integration branch yet.
func Notices(project string) ([]model.Warning, error) {
	r, err := readRepo(project)
	if errors.Is(err, errNoIntegration) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []model.Warning
	if r.drift != "" {
		out = append(out, model.Warning{File: config.File, Message: r.drift})
	}
	if why, _ := r.movedOutside(); why != "" {
		out = append(out, model.Warning{File: "refs/heads/" + r.integration, Message: why})
	}
	return out, nil
}
