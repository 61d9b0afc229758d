package uictx

import (
	"strings"

	"github.com/charmbracelet/bubbles/viewport"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
)

// Preview is the selected plan rendered as markdown, scrollable: the root
// renders it (below the Plans pane's table, or full screen in the reader)
// and the Plans pane draws it.
type Preview struct {
	VP  viewport.Model
	Rel string // the plan shown, or being rendered
	Key string // rel, mtime and width the shown text was rendered for
	Seq int    // the latest request; older renders are dropped
	// Gen counts the contents set (SetContent), so a drawn box is reused
	// until the text, its scroll or its size changes: the box costs more to
	// draw than anything else on the Plans pane, and every served session
	// draws it again on each change.
	Gen int
}

// SetContent replaces what the preview shows.
func (pv *Preview) SetContent(text string) {
	pv.VP.SetContent(text)
	pv.Gen++
}

// The marks a row carries beyond its columns: why a parked plan was set
// aside (the park verb writes the reason to the event log, not the plan),
// and the lint warnings `fleetwatch check` gives a plan (its header, its
// size, its encoding; the scan records them per file).

// ParkReasons finds, in the events newest first, the reason each plan
// was last parked with, by the rel it was parked to.
func ParkReasons(events []planfs.Event) map[string]string {
	out := map[string]string{}
	for i := range events {
		e := &events[i]
		if e.Event != "park" || e.To == "" {
			continue
		}
		if _, seen := out[e.To]; !seen {
			out[e.To] = e.Reason
		}
	}
	return out
}

// ParkReason is why the plan at r was parked, when the event log says.
func (d *Data) ParkReason(r *model.BoardRow) (string, bool) {
	if d == nil || !r.Plan.Lane.Parked() {
		return "", false
	}
	why, ok := d.Parked[r.Plan.Rel]
	return why, ok
}

// LintOf is the plan's lint warnings.
func (d *Data) LintOf(rel string) []model.Warning {
	if d == nil {
		return nil
	}
	return d.Lint[rel]
}

// PreviewNote is what the preview says above a plan: the park reason and
// the lint warnings, as a quote so it reads apart from the plan.
func PreviewNote(d *Data, r *model.BoardRow) string {
	var b strings.Builder
	if why, ok := d.ParkReason(r); ok {
		if why == "" {
			why = "no reason given"
		}
		b.WriteString("> **Parked:** " + termtext.Line(why) + "\n>\n")
	}
	for _, w := range d.LintOf(r.Plan.Rel) {
		where := ""
		if w.Line > 0 {
			where = " line " + kit.Itoa(w.Line) + ":"
		}
		b.WriteString("> **⚠" + where + "** " + termtext.Line(w.Message) + "\n>\n")
	}
	if b.Len() == 0 {
		return ""
	}
	return strings.TrimSuffix(b.String(), ">\n") + "\n"
}
