package kit

import (
	"fmt"
	"path"
	"strings"

	"github.com/fleetwatch/fleetwatch/model"
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
