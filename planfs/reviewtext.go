package planfs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// reviewTextLimit bounds what ReadReviewText returns: a review is a page
// of findings, not a log.
const reviewTextLimit = 256 << 10

// ReadReviewText returns the stored peer review at path (a
// ReviewFile.Path: .plans/reviews/<slug>/<commit>.md) for an operator to
// read, at most reviewTextLimit bytes (truncated says more were there). It
// refuses any path outside .plans/reviews/, never follows a symlink and
// never opens a FIFO.
func (t *Tree) ReadReviewText(path string) (text string, truncated bool, err error) {
	rel, err := filepath.Rel(t.Plans, path)
	rel = filepath.ToSlash(rel)
	if err != nil || !strings.HasPrefix(rel, "reviews/") || strings.Contains(rel, "../") || !strings.HasSuffix(rel, ".md") {
		return "", false, fmt.Errorf("%s is not a review in .plans/reviews/", path)
	}
	f, err := t.openPlansFile(rel, os.O_RDONLY)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, reviewTextLimit+1))
	if err != nil {
		return "", false, fmt.Errorf("%s: %v", rel, errText(err))
	}
	if len(data) > reviewTextLimit {
		return string(data[:reviewTextLimit]), true, nil
	}
	return string(data), false, nil
}
