package uitest

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// `board --width 150` on the demo cuts only titles: every slug, priority,
// holder and unmet dependency is whole, each line fits, and the columns
// with short cards leave their room to the titles of the others.
func TestBoardWidth150CutsOnlyTitles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fwtest.Want(t, fwtest.Run(t, root, "demo", "--keep", "--root", root), fwtest.ExitOK)
	dir := filepath.Join(root, "jotter")
	r := fwtest.Run(t, dir, "board", "--once", "--width", "150")
	fwtest.Want(t, r, fwtest.ExitOK)
	for i, line := range strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n") {
		if w := ansi.StringWidth(line); w > 150 {
			t.Errorf("line %d is %d cells wide:\n%s", i+1, w, line)
		}
	}
	var doc struct {
		Lanes []struct {
			Lane  string
			Plans []struct {
				Slug, Title, Priority, Value string
				Deps                         struct{ Unmet []struct{ Slug string } }
			}
		}
	}
	j := fwtest.Run(t, dir, "board", "--json")
	fwtest.Want(t, j, fwtest.ExitOK)
	if err := json.Unmarshal([]byte(j.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	cut, whole := 0, 0
	for _, l := range doc.Lanes {
		if l.Lane == "ambiguous" || l.Lane == "blocked" {
			continue // not on the default board
		}
		for _, p := range l.Plans {
			for _, cell := range []string{p.Slug, "[" + p.Priority + "/" + p.Value + "]"} {
				if !strings.Contains(r.Stdout, cell) {
					t.Errorf("%s: %q is cut or missing", p.Slug, cell)
				}
			}
			for _, d := range p.Deps.Unmet {
				if !strings.Contains(r.Stdout, "↳ UNMET "+d.Slug+" (") {
					t.Errorf("%s: its unmet %s is cut", p.Slug, d.Slug)
				}
			}
			if strings.Contains(r.Stdout, p.Title) {
				whole++
			} else {
				cut++
			}
		}
	}
	for _, held := range []string{"↳ lease EXPIRED (small-2)", "↳ reasoner-2, awaiting approval", "↳ for alice"} {
		if !strings.Contains(r.Stdout, held) {
			t.Errorf("%q is cut or missing:\n%s", held, r.Stdout)
		}
	}
	// Five columns of 29 cells each showed 11 titles whole; sized by
	// their cards, 14.
	if whole < 14 {
		t.Errorf("only %d titles whole (%d cut):\n%s", whole, cut, r.Stdout)
	}
}
