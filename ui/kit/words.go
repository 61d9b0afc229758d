package kit

import (
	"fmt"
	"path"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// USD is an amount in dollars, to the cent: "$4.46".
func USD(x float64) string { return fmt.Sprintf("$%.2f", x) }

// PlanSlug is the slug of the plan a worker names by its path, "—" for
// none.
func PlanSlug(p string) string {
	if p == "" {
		return "—"
	}
	return model.SlugOf(path.Base(strings.ReplaceAll(p, "\\", "/")))
}

// Short is a commit's first seven digits, "—" for none.
func Short(commit string) string {
	if commit == "" {
		return "—"
	}
	return termtext.Line(commit[:min(7, len(commit))])
}

// OrEmpty is sep and s, or nothing when s is empty.
func OrEmpty(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

// BudgetPaused reports whether st's run waits at its budget (rather than
// paused by hand).
func BudgetPaused(st *look.State) bool { return strings.HasPrefix(st.Paused, "budget") }
