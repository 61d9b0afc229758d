package demo

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

// routesEnd is the line of main.go new routes go above; csv-import and
// archive-notes both add theirs there, so the second to land conflicts.
const routesEnd = "\tlog.Println(\"jotter listening on :8080\")\n"

// landingQueue is the rest of the work's life: three finished changes on
// their feature branches, one peer-reviewed, approved and first in the merge
// queue, one approved and queued behind it, one a peer sent back.
func (b *builder) landingQueue() {
	b.writeApp("project", "fleetwatch.yaml")
	b.commit(19*time.Hour, alice, "fleetwatch.yaml: land on dev after vet and test")

	csv := b.change("reasoner-1", "csv-import", 2*day-5*time.Hour-10*time.Minute,
		`mux.HandleFunc("POST /api/import", importCSV(store, path))`, "Import notes from a CSV file")
	b.review("csv-import", csv, "ACCEPT", 18*time.Hour, "- All or nothing holds: rows are parsed before any note is added.\n- The row numbers in errors count the header, as a spreadsheet does.\n")
	b.approve("csv-import", csv, 17*time.Hour)

	b.finish("features/archive-notes.md", "mid-2", 15*time.Hour)
	arch := b.change("mid-2", "archive-notes", 15*time.Hour+10*time.Minute,
		`mux.HandleFunc("POST /api/notes/{id}/archive", archiveNote(store, path))`, "Archive a note: out of the list, kept on disk")
	b.finish("features/word-count.md", "reasoner-1", 8*time.Hour)
	wc := b.change("reasoner-1", "word-count", 8*time.Hour+10*time.Minute, "", "Word count for each note")
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

// change commits the sample's files for slug's branch, and a route above
// routesEnd in main.go, on the plan's feature branch in agentID's worktree,
// and returns the commit.
func (b *builder) change(agentID, slug string, ago time.Duration, route, msg string) string {
	if b.err != nil {
		return ""
	}
	wt, err := seat.Ensure(b.project, agentID, slug)
	if err != nil {
		b.fail("worktree for "+slug, err)
		return ""
	}
	files, err := branchFiles(slug)
	if err != nil {
		b.fail("change "+slug, err)
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
		if err := os.WriteFile(filepath.Join(wt.Path, name), []byte(text), 0o644); err != nil {
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
