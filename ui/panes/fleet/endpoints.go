package fleet

import (
	"slices"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// endpointLines are the Fleet pane's endpoints while any is in trouble:
// each one in trouble, with when it may be called again, and each one
// that spent today, with what it spent (what the others can still take
// on). With none in trouble the budgets say it all: no lines.
func endpointLines(cm *uictx.Common, f uictx.FleetMsg, now time.Time) []string {
	states := map[string]look.EndpointState{}
	names := make([]string, 0, len(f.Endpoints)+len(f.Fleet.Endpoints))
	for _, st := range f.Endpoints {
		if st.Problem(now) != "" {
			states[st.Name] = st
			names = append(names, st.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	for n := range f.Fleet.Endpoints {
		if _, ok := states[n]; !ok && n != "" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	w := 0
	for _, n := range names {
		w = min(24, max(w, kit.CellWidth(n)))
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		line := "  " + kit.Fit(termtext.Line(n), w) + "  " + endpointState(cm, states[n], n, now)
		if t, ok := f.Fleet.Endpoints[n]; ok && (t.Tokens > 0 || t.USD > 0) {
			line += " · " + t.String() + " today"
		}
		out = append(out, line)
	}
	return out
}

// endpointState is an endpoint's state in words: ok, or what stops its
// claims and until when.
func endpointState(cm *uictx.Common, st look.EndpointState, name string, now time.Time) string {
	if st.Name == "" || st.Problem(now) == "" {
		return "ok"
	}
	var s string
	switch st.State {
	case look.EndpointDisabled:
		s = "disabled: " + clip(st.Reason, 60) + " (fleetwatch endpoints clear " + name + ")"
	case look.EndpointShut:
		s = "shut until " + st.Until.Local().Format("Jan 2 15:04") + " (" + kit.Span(st.Until.Sub(now).Seconds()) + "): " + clip(st.Reason, 60)
	default:
		s = "backing off until " + st.Until.Local().Format("15:04:05") + " (" + kit.Span(st.Until.Sub(now).Seconds()) + "): " + clip(st.Reason, 60)
	}
	if cm.Plain {
		return "⚠ " + s
	}
	return cm.St.Bad.Render("⚠ " + s)
}

func clip(s string, n int) string {
	s = termtext.Line(s)
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}
