package kit

import "github.com/fleetwatch/fleetwatch/model"

// SlugOf is the slug of the plan at rel (a path under .plans/).
func SlugOf(rel string) string {
	name := model.Rel(rel).Name()
	return model.SlugOf(name)
}

// LaneOf is the lane the plan at rel is in.
func LaneOf(rel string) string {
	l := model.Rel(rel).Lane()
	return string(l)
}
