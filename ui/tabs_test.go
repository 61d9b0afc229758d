package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/fleetwatch/fleetwatch/ui/kit"
)

// Below 160 columns the tab bar dropped every name but the current
// pane's (`1  2  3  4  5  [6 Merge]  7  8`): the names shorten instead,
// to three letters at the least, and the counts give way first.
func TestTabNamesShortenRatherThanVanish(t *testing.T) {
	t.Parallel()
	for _, w := range []int{80, 100, 120} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, demoProject(t), w, 30)
			var headers []string
			for i, spec := range paneSpecs {
				h.press(kit.Itoa(i + 1))
				head := strings.Split(h.view(), "\n")[0]
				headers = append(headers, head)
				if ansi.StringWidth(head) != w {
					t.Errorf("the header is %d cells wide, not %d:\n%s", ansi.StringWidth(head), w, head)
				}
				// The day's spend stays; the counts give way first, the
				// alarm (an expired lease) last.
				if !strings.Contains(head, "["+kit.Itoa(i+1)+" ") || !strings.Contains(head, " jotter · $4.46 today") ||
					(w >= 100 && !strings.Contains(head, "1 expired")) || (w >= 120 && !strings.Contains(head, " · 22 plans · ")) {
					t.Errorf("pane %d: no bracketed current pane, no spend, no alarm or no plan count:\n%s", i+1, head)
				}
				for j, other := range paneSpecs {
					if tiny := kit.Itoa(j+1) + " " + other.short[:tinyTabs]; j != i && !strings.Contains(head, tiny) {
						t.Errorf("pane %d (%s): the tab of %s is not even %q:\n%s", i+1, spec.name, other.name, tiny, head)
					}
				}
				if strings.Contains(head, "22 pl…") || strings.Contains(head, "lea…") {
					t.Errorf("a count cut in half:\n%s", head)
				}
			}
		})
	}
}

// The tab bar of the sample project at 80, 100 and 120 columns, on each
// pane (testdata/TestGoldenTabs/<w>.golden; -update rewrites them).
func TestGoldenTabs(t *testing.T) {
	t.Parallel()
	for _, w := range []int{80, 100, 120} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, newProject(t), w, 24)
			var headers []string
			for i := range paneSpecs {
				h.press(kit.Itoa(i + 1))
				headers = append(headers, strings.Split(h.view(), "\n")[0])
			}
			teatest.RequireEqualOutput(t, []byte(strings.Join(headers, "\n")+"\n"))
		})
	}
}
