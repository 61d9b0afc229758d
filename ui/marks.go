package ui

import (
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// The marks a row carries beyond its columns: why a parked plan was set
// aside (the park verb writes the reason to the event log, not the plan),
// and the lint warnings `fleetwatch check` gives a plan (its header, its
// size, its encoding; the scan records them per file).

// parkReasons finds, in the events newest first, the reason each plan
// was last parked with, by the rel it was parked to.
func parkReasons(events []planfs.Event) map[string]string {
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

// parkReason is why the plan at r was parked, when the event log says.
func parkReason(d *uictx.Data, r *model.BoardRow) (string, bool) {
	if d == nil || !r.Plan.Lane.Parked() {
		return "", false
	}
	why, ok := d.Parked[r.Plan.Rel]
	return why, ok
}

// lintOf is the plan's lint warnings.
func lintOf(d *uictx.Data, rel string) []model.Warning {
	if d == nil {
		return nil
	}
	return d.Lint[rel]
}

// whyText is the plans table's reason column: for a parked plan the
// reason it was parked with, else its dependencies (depsText).
func whyText(d *uictx.Data, r *model.BoardRow) (string, bool) {
	if why, ok := parkReason(d, r); ok {
		if why == "" {
			return "parked, no reason given", false
		}
		return termtext.Line(why), false
	}
	return depsText(r)
}

// previewNote is what the preview says above a plan: the park reason and
// the lint warnings, as a quote so it reads apart from the plan.
func previewNote(d *uictx.Data, r *model.BoardRow) string {
	var b strings.Builder
	if why, ok := parkReason(d, r); ok {
		if why == "" {
			why = "no reason given"
		}
		b.WriteString("> **Parked:** " + termtext.Line(why) + "\n>\n")
	}
	for _, w := range lintOf(d, r.Plan.Rel) {
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
