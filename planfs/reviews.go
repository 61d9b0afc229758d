package planfs

// Landing keeps two things in .plans/reviews/<slug>/, which is not a lane
// (Scan, check, repair and the watcher never look there): <commit>.md per
// peer review, a header of `- **Key:** value` lines then the findings, and
// approved.json for a person's approve of one commit. Both are written
// whole (temp file and rename) in a folder reached without a symlink.
//
// SendBack and Defer first append the note to the plan (an exchange that
// fails if the plan moved meanwhile), then move it, then void the approval.
// A crash after the note leaves the plan in review-needed/ with its note; a
// rerun finds the same bullet there and does not add it twice.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/model"
)

// ReviewsDir is the folder of reviews and approvals, relative to .plans/.
const ReviewsDir = "reviews"

// approvalFile is a slug's approval, in its reviews folder.
const approvalFile = "approved.json"

// ReviewFile is one stored peer review.
type ReviewFile struct {
	Slug, Commit, Reviewer, Endpoint string
	Base                             string // the merge base it was reviewed against
	Verdict                          string // ACCEPT, REVISE or ESCALATE
	At                               time.Time
	Path                             string // absolute
	// Self: the author's own endpoint reviewed it, as the operator allowed.
	Self bool
}

// Verdicts are the words a peer review may end in.
var Verdicts = []string{"ACCEPT", "REVISE", "ESCALATE"}

var commitRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{7,64}$`) })

// reviewsRel is slug's reviews folder relative to .plans/, after checking
// slug and, when given, commit cannot name a path elsewhere.
func reviewsRel(slug, commit string) (string, error) {
	if err := ValidSlug(slug); err != nil {
		return "", err
	}
	if commit != "" && !commitRe().MatchString(commit) {
		return "", fmt.Errorf("%s: bad commit %q: want a hex object id", slug, commit)
	}
	return ReviewsDir + "/" + slug, nil
}

// writeReviewsFile replaces name in slug's reviews folder whole.
func (t *Tree) writeReviewsFile(dir, name string, data []byte) error {
	if _, err := t.mkdirPlans(dir); err != nil {
		return err
	}
	d, err := safepath.OpenDir(t.root(), inPlans(dir), false)
	if err != nil {
		return err
	}
	defer d.Close()
	return atomicfile.WriteAt(d, name, data, 0o644)
}

// WriteReview stores a peer review's text as .plans/reviews/<slug>/<commit>.md
// with r's fields in its header, and logs a `review` event.
func (t *Tree) WriteReview(r ReviewFile, text []byte) (string, error) {
	if err := t.refuse(r.Slug); err != nil {
		return "", err
	}
	dir, err := reviewsRel(r.Slug, r.Commit)
	if err != nil {
		return "", err
	}
	if !slices.Contains(Verdicts, r.Verdict) {
		return "", fmt.Errorf("%s: bad verdict %q: want ACCEPT, REVISE or ESCALATE", r.Slug, r.Verdict)
	}
	if r.At.IsZero() {
		r.At = t.Now()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Review of %s at %s\n\n", r.Slug, short(r.Commit))
	for _, kv := range [][2]string{
		{"Verdict", r.Verdict}, {"Reviewer", r.Reviewer}, {"Endpoint", r.Endpoint},
		{"Commit", r.Commit}, {"Base", r.Base}, {"At", r.At.UTC().Format(time.RFC3339)},
	} {
		fmt.Fprintf(&b, "- **%s:** %s\n", kv[0], oneLine(kv[1]))
	}
	if r.Self {
		b.WriteString("- **Self review:** yes: the endpoint that wrote the change reviewed it (--allow-self)\n")
	}
	b.WriteString("\n")
	b.Write(text)
	if len(text) > 0 && text[len(text)-1] != '\n' {
		b.WriteString("\n")
	}
	name := r.Commit + ".md"
	if err := t.writeReviewsFile(dir, name, []byte(b.String())); err != nil {
		return "", fmt.Errorf("cannot write %s/%s/%s: %v", Dir, dir, name, errText(err))
	}
	t.appendEvent(Event{Event: "review", Slug: r.Slug, AgentID: r.Reviewer, Reason: r.Verdict + " at " + short(r.Commit)})
	return t.Abs(dir + "/" + name), nil
}

func short(commit string) string { return commit[:min(len(commit), 7)] }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ReadReviews lists slug's stored peer reviews, newest first. Files that
// are not reviews (no verdict or commit in the header) are skipped.
func (t *Tree) ReadReviews(slug string) ([]ReviewFile, error) {
	dir, err := reviewsRel(slug, "")
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(t.Abs(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s/%s: %v", Dir, dir, errText(err))
	}
	var out []ReviewFile
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
			continue
		}
		data, err := readHead(t.Abs(dir + "/" + name))
		if err != nil {
			continue
		}
		r := parseReview(data)
		if r.Commit == "" || r.Verdict == "" {
			continue
		}
		r.Slug, r.Path = slug, t.Abs(dir+"/"+name)
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b ReviewFile) int { return b.At.Compare(a.At) })
	return out, nil
}

// parseReview reads a review's `- **Key:** value` header lines.
func parseReview(text string) ReviewFile {
	var r ReviewFile
	for line := range strings.SplitSeq(text, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "- **")
		if !ok {
			continue
		}
		key, val, ok := strings.Cut(rest, ":**")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "Verdict":
			r.Verdict = val
		case "Reviewer":
			r.Reviewer = val
		case "Endpoint":
			r.Endpoint = val
		case "Commit":
			if commitRe().MatchString(val) {
				r.Commit = val
			}
		case "Base":
			r.Base = val
		case "At":
			r.At, _ = time.Parse(time.RFC3339, val)
		}
	}
	return r
}

// ApprovalFile is a person's approve of one commit of slug's branch.
type ApprovalFile struct {
	Slug   string    `json:"slug"`
	Commit string    `json:"commit"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
}

// WriteApproval records a's approve of commit (an `approve` event too),
// replacing an earlier approval of slug.
func (t *Tree) WriteApproval(slug, commit string, a Actor) (ApprovalFile, error) {
	if err := t.refuse(slug); err != nil {
		return ApprovalFile{}, err
	}
	dir, err := reviewsRel(slug, commit)
	if err != nil {
		return ApprovalFile{}, err
	}
	ap := ApprovalFile{Slug: slug, Commit: commit, By: a.AgentID, At: t.Now().UTC().Truncate(time.Second)}
	data, _ := json.MarshalIndent(ap, "", "  ")
	if err := t.writeReviewsFile(dir, approvalFile, append(data, '\n')); err != nil {
		return ApprovalFile{}, fmt.Errorf("cannot write %s/%s/%s: %v", Dir, dir, approvalFile, errText(err))
	}
	t.appendEvent(Event{Event: "approve", Slug: slug, AgentID: a.AgentID, Reason: orDefault(a.Reason, "at "+short(commit))})
	return ap, nil
}

// ReadApproval is slug's standing approval, nil when none. An approval
// file that does not parse is an error naming it, never an approval.
func (t *Tree) ReadApproval(slug string) (*ApprovalFile, error) {
	dir, err := reviewsRel(slug, "")
	if err != nil {
		return nil, err
	}
	f, err := t.openPlansFile(dir+"/"+approvalFile, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	rel := Dir + "/" + dir + "/" + approvalFile
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", rel, errText(err))
	}
	defer f.Close()
	var ap ApprovalFile
	if err := json.NewDecoder(f).Decode(&ap); err != nil {
		return nil, fmt.Errorf("%s is not an approval: %v", rel, err)
	}
	if !commitRe().MatchString(ap.Commit) || ap.By == "" {
		return nil, fmt.Errorf("%s is not an approval: no commit or approver", rel)
	}
	ap.Slug = slug
	return &ap, nil
}

// VoidApproval drops slug's approval (send-back, needs-work), logging why
// (a.Reason) as a `void-approval` event. No approval is not an error.
func (t *Tree) VoidApproval(slug string, a Actor) error {
	if err := t.refuse(slug); err != nil {
		return err
	}
	dir, err := reviewsRel(slug, "")
	if err != nil {
		return err
	}
	ap, _ := t.ReadApproval(slug)
	d, err := safepath.OpenDir(t.root(), inPlans(dir), false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot void the approval of %s: %v", slug, errText(err))
	}
	defer d.Close()
	err = removeAt(d, approvalFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot void the approval of %s: %v", slug, errText(err))
	}
	ev := Event{Event: "void-approval", Slug: slug, AgentID: a.AgentID, Reason: a.Reason}
	if ap != nil && ev.Reason == "" {
		ev.Reason = "approval of " + short(ap.Commit) + " by " + ap.By
	}
	t.appendEvent(ev)
	return nil
}

// removeAt unlinks name in the open folder d, never through a symlink in
// its path.
func removeAt(d *os.File, name string) error {
	if err := unix.Unlinkat(int(d.Fd()), name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// Author is the agent id whose run moved slug to review-needed/, from the
// event log: the newest event that put it there from elsewhere. "" when
// unknown.
func (t *Tree) Author(slug string) string { return t.Authors()[slug] }

// Authors is every slug's author by Author's rule, from one read of the
// event log: a listing of many candidates asks once, not once per slug.
func (t *Tree) Authors() map[string]string {
	authors := map[string]string{}
	events, _ := t.Events()
	for _, e := range events {
		if model.Rel(e.To).Lane() == model.ReviewNeeded && model.Rel(e.From).Lane() != model.ReviewNeeded {
			authors[e.Slug] = e.AgentID
		}
	}
	return authors
}

// SendBack moves a review-needed plan back to the ready lane it was
// claimed from (else features/), with note appended under `## Review
// notes`, and voids its approval. The branch is left alone: the next
// owner's claim gets it.
func (t *Tree) SendBack(rel, note string, a Actor) (string, error) {
	return t.sendOff(rel, note, a, model.SendBack, "sendback", "needs work", Event{Event: "needs-work"})
}

// Defer parks a review-needed plan in blocked/ with note under
// `## Review notes`, and voids its approval.
func (t *Tree) Defer(rel, note string, a Actor) (string, error) {
	return t.sendOff(rel, note, a, model.Defer, "defer", "deferred", Event{Event: "defer"})
}

// sendOff is SendBack and Defer: note, move, void (see the top of the file).
func (t *Tree) sendOff(rel, note string, a Actor, verb model.Verb, step, kind string, ev Event) (string, error) {
	if err := t.refuse(rel); err != nil {
		return "", err
	}
	lane, err := t.needPlan(rel)
	if err != nil {
		return "", err
	}
	if !model.RuleOf(verb).Takes(lane) {
		return "", wrongLane(rel, verb)
	}
	if strings.TrimSpace(note) == "" {
		return "", planErr(rel, ErrBadTarget, "a note is required (say what needs doing)")
	}
	to := model.RuleOf(verb).Default
	if to == "" {
		to = t.originLane(rel, nil, model.Features)
	}
	if err := t.writable(lane, to); err != nil {
		return "", planErr(rel, err, "%v", err)
	}
	if _, err := reviewsRel(model.Rel(rel).Slug(), ""); err != nil {
		return "", planErr(rel, ErrBadTarget, "%v", err)
	}
	if err := t.appendReviewNote(rel, ReviewNote(t.Now(), a.AgentID, kind, note)); err != nil {
		return "", err
	}
	failpoint(step + ":noted")
	ev.AgentID, ev.Reason, ev.Origin = a.AgentID, oneLine(note), t.eventOrigin(rel)
	dst, err := t.move(rel, to, step+":moved", nil, ev)
	if err != nil {
		return "", err
	}
	_ = t.VoidApproval(model.Rel(rel).Slug(), Actor{AgentID: a.AgentID, Reason: kind + ": " + oneLine(note)})
	return dst, nil
}

// Land moves a review-needed plan to completed/ once its change landed.
func (t *Tree) Land(rel string, a Actor) (string, error) {
	if err := t.refuse(rel); err != nil {
		return "", err
	}
	lane, err := t.needPlan(rel)
	if err != nil {
		return "", err
	}
	if !model.RuleOf(model.Land).Takes(lane) {
		return "", wrongLane(rel, model.Land)
	}
	return t.move(rel, model.Completed, "land:plan-moved", nil, Event{Event: "land", AgentID: a.AgentID, Reason: a.Reason})
}

// ReviewNote is one bullet of `## Review notes`:
// `- 2026-12-02 operator-root (needs work): note`, a multi-line note's
// later lines indented under it.
func ReviewNote(now time.Time, agent, kind, note string) string {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(note, "\r\n", "\n")), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "- %s %s (%s): %s\n", now.UTC().Format("2006-01-02"), agent, kind, strings.TrimSpace(lines[0]))
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString("  " + strings.TrimRight(l, " \t") + "\n")
	}
	return b.String()
}

// reviewNotesHeading opens the section notes go under.
const reviewNotesHeading = "## Review notes"

// WithReviewNote is text with bullet at the end of its `## Review notes`
// section, the section added at the end when absent; text unchanged when
// the bullet is already there (a rerun after a crash).
func WithReviewNote(text, bullet string) string {
	if strings.Contains(text, bullet) {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	start, end := reviewNotesSection(lines)
	if start < 0 {
		text = strings.TrimRight(text, "\n")
		if text != "" {
			text += "\n\n"
		}
		return text + reviewNotesHeading + "\n\n" + bullet
	}
	// Keep the blank lines that separate the section from the next one
	// after the new bullet.
	body := end
	for body > start+1 && strings.TrimSpace(lines[body-1]) == "" {
		body--
	}
	head := strings.Join(lines[:body], "")
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	if body == start+1 {
		head += "\n"
	}
	tail := strings.Join(lines[body:], "")
	if end < len(lines) && tail == "" {
		tail = "\n"
	}
	return head + bullet + tail
}

// reviewNotesSection finds the last `## Review notes` heading of lines and
// the next heading after it (len(lines) when none); start is -1 when there
// is no such section.
func reviewNotesSection(lines []string) (start, end int) {
	start = -1
	for i, l := range lines {
		if strings.TrimSpace(l) == reviewNotesHeading {
			start = i
		}
	}
	if start < 0 {
		return -1, len(lines)
	}
	for i := start + 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "## ") || strings.HasPrefix(lines[i], "# ") {
			return start, i
		}
	}
	return start, len(lines)
}

// appendReviewNote adds bullet to the plan at rel in place, failing if the
// plan moved or changed while it was written (see swapIn).
func (t *Tree) appendReviewNote(rel, bullet string) error {
	data, mode, err := t.readWhole(rel)
	if err != nil {
		return err
	}
	next := WithReviewNote(string(data), bullet)
	if next == string(data) {
		return nil
	}
	if err := t.swapIn(&EditCopy{Rel: rel, orig: data, mode: mode}, []byte(next)); err != nil {
		return planErr(rel, err, "cannot add the review note: %v", err)
	}
	return nil
}
