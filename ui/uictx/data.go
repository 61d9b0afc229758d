package uictx

import (
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// Data is one refresh of everything the screen shows about the tree.
type Data struct {
	Board  *model.Board
	Now    float64         // Unix seconds the board was judged at
	Rels   map[string]bool // every plan's rel, for questions asked per key press
	Events []planfs.Event
	// EventsErr is why the event log could not be read; the rest still shows.
	EventsErr error
	Parked    map[string]string          // why each parked plan was parked (ui's marks.go)
	Lint      map[string][]model.Warning // each plan's lint warnings
	Commits   map[string]float64         // each branch's last commit, for stuck plans
}

// NewData indexes a board judged at now.
func NewData(b *model.Board, now float64) *Data {
	d := &Data{Board: b, Now: now, Rels: make(map[string]bool, len(b.Rows)), Lint: lintByFile(b.Warnings)}
	for i := range b.Rows {
		d.Rels[b.Rows[i].Plan.Rel] = true
	}
	return d
}

// Has reports whether the reading saw a plan at rel.
func (d *Data) Has(rel string) bool { return d != nil && d.Rels[rel] }

// lintByFile indexes the scan's warnings by the plan they are about.
func lintByFile(ws []model.Warning) map[string][]model.Warning {
	out := map[string][]model.Warning{}
	for _, w := range ws {
		if w.File != "" {
			out[w.File] = append(out[w.File], w)
		}
	}
	return out
}
