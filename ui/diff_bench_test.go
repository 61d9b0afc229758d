package ui

import (
	"fmt"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/workers/look"
)

// benchDiff is a diff of n changed lines over files of 500 (fewer when n
// is small), with hunk headers and context as git writes them.
func benchDiff(n int) look.Diff {
	d := look.Diff{Branch: "feature/export-pdf", Integration: "dev", Base: "0123456789abcdef", Worktree: "var/worktrees/mid-1"}
	per := min(n, 500)
	for i := 0; i < n; i += per {
		f := look.FileDiff{Path: fmt.Sprintf("internal/render/page%02d.go", i/per), Added: per * 2 / 3, Deleted: per - per*2/3}
		for j := range per {
			switch {
			case j%50 == 0:
				f.Lines = append(f.Lines, fmt.Sprintf("@@ -%d,40 +%d,50 @@ func render%d(w io.Writer) error {", j, j, j))
			case j%3 == 2:
				f.Lines = append(f.Lines, fmt.Sprintf("-    old := page(%d) // the way it was drawn before the change, kept for a while", j))
			case j%7 == 0:
				f.Lines = append(f.Lines, fmt.Sprintf("     ctx := context.Background() // line %d", j))
			default:
				f.Lines = append(f.Lines, fmt.Sprintf("+    if err := page(w, %d, margins{top: 2, left: 3}); err != nil { return err }", j))
			}
		}
		d.Committed = append(d.Committed, f)
	}
	return d
}

// diffBenchModel is the UI at 160×48 in true colour with the diff view
// open and computing.
func diffBenchModel(b *testing.B) Model {
	b.Helper()
	m := benchModel(b, 100)
	m.stack = nil
	m.openDiff("plan export-pdf", "plan\x00export-pdf", nil)
	return m
}

// BenchmarkDiffOpen10k is from a diff of 10,000 changed lines arriving to
// the first frame drawn (target ≤ 50 ms).
func BenchmarkDiffOpen10k(b *testing.B) {
	m := diffBenchModel(b)
	d := benchDiff(10_000)
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		mm := m
		mm.stack = nil
		mm.openDiff("plan export-pdf", "plan\x00export-pdf", nil)
		b.StartTimer()
		mm = step(mm, diffMsg{req: "plan\x00export-pdf", diff: d})
		if v := mm.View(); len(v) == 0 {
			b.Fatal("no frame")
		}
	}
}

func benchDiffScroll(b *testing.B, n int) {
	m := step(diffBenchModel(b), diffMsg{req: "plan\x00export-pdf", diff: benchDiff(n)})
	v := m.stack.top().(*diffView)
	pgdown := tea.KeyMsg{Type: tea.KeyPgDown}
	b.ResetTimer()
	for b.Loop() {
		if v.off >= len(v.lines)-m.diffVisible() {
			v.off = 0
		}
		m = step(m, pgdown)
		if len(m.View()) == 0 {
			b.Fatal("no frame")
		}
	}
}

// BenchmarkDiffScroll10k is one page down and the frame after it, in a
// diff of 10,000 changed lines (target ≤ 16 ms); BenchmarkDiffScroll10
// the same in one of ten, to compare.
func BenchmarkDiffScroll10k(b *testing.B) { benchDiffScroll(b, 10_000) }
func BenchmarkDiffScroll10(b *testing.B)  { benchDiffScroll(b, 10) }
