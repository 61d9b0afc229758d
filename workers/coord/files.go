package coord

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
)

// The files of one plan's proposals, in var/fleet/run/proposals/<slug>/:
// <n>.md (the agent's text), <n>.json (the driver's Record), <n>.approved.md
// (an approver's edit), feedback-<n>.md (a rejection's note), decision.json
// (the latest Decision) and .lock (the approvers' flock). Every write goes
// through safepath (no symlink below the project is followed) and replaces
// a file whole.

// MaxProposal bounds a proposal's size: a plan, not a data dump.
const MaxProposal = 1 << 20

// proposalsRel is the slug's folder relative to the project.
func proposalsRel(slug string) string { return RunDir + "/proposals/" + slug }

// ProposalDir is the slug's proposals folder (absolute).
func ProposalDir(project, slug string) string {
	return filepath.Join(project, filepath.FromSlash(proposalsRel(slug)))
}

func proposalName(n int) string { return strconv.Itoa(n) + ".md" }
func recordName(n int) string   { return strconv.Itoa(n) + ".json" }
func approvedName(n int) string { return strconv.Itoa(n) + ".approved.md" }
func feedbackName(n int) string { return "feedback-" + strconv.Itoa(n) + ".md" }

const decisionName = "decision.json"

// checkSlug refuses a slug that is no single path segment.
func checkSlug(slug string) error {
	if slug == "" || slug == "." || slug == ".." || strings.ContainsAny(slug, "/\\\x00") {
		return fmt.Errorf("%q is not a plan slug", slug)
	}
	return nil
}

// openDir opens (creating when asked) the slug's folder without following
// a symlink.
func openDir(project, slug string, create bool) (*os.File, error) {
	if err := checkSlug(slug); err != nil {
		return nil, err
	}
	return safepath.OpenDir(project, proposalsRel(slug), create)
}

// latestN is the highest n with an <n>.md in the slug's folder; 0 when none.
func latestN(project, slug string) (int, error) {
	d, err := openDir(project, slug, false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", d.Name(), err)
	}
	best := 0
	for _, name := range names {
		num, ok := strings.CutSuffix(name, ".md")
		if !ok || num == "" || strings.TrimLeft(num, "0123456789") != "" {
			continue
		}
		if n, err := strconv.Atoi(num); err == nil && n > best {
			best = n
		}
	}
	return best, nil
}

// NextProposal is where slug's next plan turn writes its proposal: the
// folder exists once it returns, and n is one more than the highest
// proposal there.
func NextProposal(project, slug string) (path string, n int, err error) {
	d, err := openDir(project, slug, true)
	if err != nil {
		return "", 0, fmt.Errorf("proposals folder: %v", err)
	}
	d.Close()
	last, err := latestN(project, slug)
	if err != nil {
		return "", 0, err
	}
	n = last + 1
	return filepath.Join(ProposalDir(project, slug), proposalName(n)), n, nil
}

// readFile reads name in the slug's folder: a regular file (not a symlink),
// at most limit bytes. A missing file is fs.ErrNotExist.
func readFile(project, slug, name string, limit int64) ([]byte, error) {
	if err := checkSlug(slug); err != nil {
		return nil, err
	}
	rel := proposalsRel(slug) + "/" + name
	f, err := safepath.OpenFile(project, rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", f.Name(), err)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d allowed", f.Name(), fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", f.Name(), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: more than the %d bytes allowed", f.Name(), limit)
	}
	return data, nil
}

// writeFile replaces name in the slug's folder atomically.
func writeFile(project, slug, name string, data []byte) error {
	d, err := openDir(project, slug, true)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := atomicfile.WriteAt(d, name, data, 0o644); err != nil {
		return fmt.Errorf("%s: %v", filepath.Join(d.Name(), name), err)
	}
	return nil
}

// readProposalText reads proposal n whole, refusing an empty or oversized
// file, a symlink or anything not regular, with an error naming the path.
func readProposalText(project, slug string, n int) ([]byte, error) {
	data, err := readFile(project, slug, proposalName(n), MaxProposal)
	if err != nil {
		return nil, fmt.Errorf("proposal %d: %v", n, err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("proposal %d: %s is empty", n, filepath.Join(ProposalDir(project, slug), proposalName(n)))
	}
	return data, nil
}

func sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// RecordProposal writes the driver's authorship record for proposal rec.N
// of rec.Slug beside it, with the file's sha256 and the time: what approve
// later checks the text against.
func RecordProposal(project string, rec Record) (Record, error) {
	data, err := readProposalText(project, rec.Slug, rec.N)
	if err != nil {
		return rec, err
	}
	rec.SHA256 = sum(data)
	rec.At = time.Now().UTC()
	b, _ := json.MarshalIndent(rec, "", "  ")
	if err := writeFile(project, rec.Slug, recordName(rec.N), append(b, '\n')); err != nil {
		return rec, fmt.Errorf("authorship record: %v", err)
	}
	return rec, nil
}

// readRecord reads proposal n's record; nil when there is none.
func readRecord(project, slug string, n int) (*Record, error) {
	var rec Record
	ok, err := readJSON(project, slug, recordName(n), &rec)
	if !ok {
		return nil, err
	}
	return &rec, nil
}

// readDecision reads the slug's latest decision; nil when there is none.
func readDecision(project, slug string) (*Decision, error) {
	var d Decision
	ok, err := readJSON(project, slug, decisionName, &d)
	if !ok {
		return nil, err
	}
	return &d, nil
}

// readJSON decodes name into v; ok is false when the file is missing (err
// nil) or unreadable (err says why).
func readJSON(project, slug, name string, v any) (ok bool, err error) {
	data, err := readFile(project, slug, name, 64<<10)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%s: %v", filepath.Join(ProposalDir(project, slug), name), err)
	}
	return true, nil
}

func writeJSON(project, slug, name string, v any) error {
	b, _ := json.MarshalIndent(v, "", "  ")
	return writeFile(project, slug, name, append(b, '\n'))
}

// lockSlug holds the slug folder's flock: two approvers racing make one
// decision. The kernel drops it if the holder dies.
func lockSlug(project, slug string) (unlock func(), err error) {
	if err := checkSlug(slug); err != nil {
		return nil, err
	}
	unlock, err = safepath.Lock(project, proposalsRel(slug)+"/.lock", 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("decision lock: %v", err)
	}
	return unlock, nil
}
