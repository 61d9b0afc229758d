package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
)

// TestGoldenDiff runs the real program (teatest) on the diff project: d on
// export-pdf, whose worktree has commits and uncommitted edits, then n to
// the fourth file's patch. Goldens in testdata/TestGoldenDiff/ (-update
// rewrites them).
func TestGoldenDiff(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		w, h := size[0], size[1]
		for _, sc := range []struct {
			name string
			keys []string
			want []string
		}{
			{"top", nil, nil},
			{"render", []string{"n", "n", "n", "n"}, []string{"━━ render.go  +64 −0"}},
		} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, w, h), func(t *testing.T) {
				t.Parallel()
				p, _ := diffProject(t)
				tm := teatest.NewTestModel(t, New(p.options()), teatest.WithInitialTermSize(w, h))
				waitFor(t, tm, []string{"crash-on-save"})
				// bugs → features → in-progress, where export-pdf is first.
				sendKeys("]", "]")(tm)
				waitFor(t, tm, []string{"export-pdf"})
				sendKeys("d")(tm)
				waitFor(t, tm, []string{"Committed on feature/export-pdf", "Untracked: 1 file"})
				if len(sc.keys) > 0 {
					sendKeys(sc.keys...)(tm)
					waitFor(t, tm, sc.want)
				}
				if err := tm.Quit(); err != nil {
					t.Fatal(err)
				}
				final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
				v := final.View()
				checkScreen(t, v, w, h, p)
				teatest.RequireEqualOutput(t, []byte(v))
			})
		}
	}
}
