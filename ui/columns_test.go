package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"fleetwatch/model"
)

// fit promises exactly w cells, but when the cut lands inside a wide
// character it returns w-1, so every column after a CJK title or slug
// shifts one cell left (pri, val and the tier ranks no longer sit under
// their headers).
func TestFitIsExactWidthAfterCuttingWideChars(t *testing.T) {
	for _, s := range []string{"日本語のタイトル", "宽字符-slug-名前", "ｆｕｌｌｗｉｄｔｈ"} {
		for w := 1; w <= 12; w++ {
			if got := ansi.StringWidth(fit(s, w)); got != w {
				t.Errorf("fit(%q, %d) is %d cells wide: %q", s, w, got, fit(s, w))
			}
		}
	}
}

// The same seen on screen: the row of a plan with a CJK title has its
// priority one column left of every other row's.
func TestWideTitleKeepsColumnsAligned(t *testing.T) {
	p := newProject(t)
	if _, err := p.tree.AddPlanAt(model.Bugs, "cjk.md", plan("日本語のタイトルはとても長いです日本語のタイトルはとても長いです", "high", "P1", "small", "", "none"), testNow.Add(-7*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 120, 32)
	v := h.view()
	col := map[string]int{}
	for _, l := range strings.Split(v, "\n") {
		for _, slug := range []string{"cjk", "crash-on-save"} {
			if strings.Contains(l, " "+slug+" ") {
				i := strings.Index(l, " P1 ")
				col[slug] = ansi.StringWidth(l[:i])
			}
		}
	}
	if col["cjk"] != col["crash-on-save"] {
		t.Errorf("the priority column is at cell %d on the CJK row and %d on the others:\n%s", col["cjk"], col["crash-on-save"], v)
	}
}

// Rank cells are three cells wide below 110 columns of table (every
// terminal under ~135 wide), so rank 100? or 1000 is cut to "10…" or
// "100…": an operator reads a number that is not the rank.
func TestRankCellsAreNotCut(t *testing.T) {
	p := newProject(t)
	for i := range 105 {
		// A model no tier names: fit unknown for every tier, so each
		// plan gets a rank with `?` in all four columns.
		if _, err := p.tree.AddPlanAt(model.Features, fmt.Sprintf("many-%03d.md", i), plan(fmt.Sprintf("Plan %d", i), "low", "P3", "qwen3-32b", "", "none"), testNow.Add(-time.Duration(i+1)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, p, 120, 32)
	h.press("]", "G")
	v := h.view()
	if strings.Contains(v, "10…") || strings.Contains(v, "11…") {
		t.Errorf("rank numbers are cut on screen:\n%s", v)
	}
}
