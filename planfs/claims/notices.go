package claims

import "github.com/fleetwatch/fleetwatch/model"

// Notices are the warnings of a backend's view that are about no plan
// file: its own notices (a backward move of the integration branch),
// which a worker's stderr and the board's text say.
func Notices(s *model.Snapshot) []model.Warning {
	var out []model.Warning
	for _, w := range s.Warnings {
		if _, err := model.ParseRel(w.File); err != nil && w.File != "" {
			out = append(out, w)
		}
	}
	return out
}
