package uictx

import (
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/forge"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// Forge is the cockpit's reading of the project's forge (ui/forgesync,
// landing.SyncForge in the background), as the Merge pane shows it: the
// zero value is a project without a forge, or one not looked at yet.
type Forge struct {
	On   bool      // the project has a forge (fleetwatch.yaml's forge:)
	Busy bool      // a reading of the forge runs now
	At   time.Time // when the last one ended
	Err  error     // why the last one failed; nil after one that worked
}

// BrowseReq asks the root to open URL, a PR's address, in the operator's
// browser (internal/browse); a served session, whose processes run on the
// server, shows it in the status line instead.
type BrowseReq struct{ URL string }

// ForgeSyncReq asks the root to read the forge now, in the background,
// then the queue again; asked while one runs, it runs once more after.
type ForgeSyncReq struct{}

// Thread is a plan's PR and the comments people left on it on the forge,
// waiting in the inbox until dismissed (landing.DismissComments).
type Thread struct {
	Slug     string
	Number   int
	URL      string
	Comments []forge.Comment
}

// ReadThreads are the comments waiting in the inbox, by plan in review:
// none when the project has no forge. A record that cannot be read is
// passed over; the Merge pane names it.
func ReadThreads(t *planfs.Tree) []Thread {
	if !landing.ForgeOn(t.Project) {
		return nil
	}
	snap, err := t.Rescan()
	if err != nil {
		return nil
	}
	var out []Thread
	for _, p := range snap.Plans {
		if p.Lane != model.ReviewNeeded || p.Local {
			continue
		}
		pr, err := landing.ReadPR(t.Project, p.Slug)
		if err != nil || pr == nil || len(pr.Comments) == 0 {
			continue
		}
		out = append(out, Thread{Slug: p.Slug, Number: pr.Number, URL: pr.URL, Comments: pr.Comments})
	}
	return out
}
