package workers

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// Help is what `?` lists for the pane: its keys, its symbols, and the
// keys that change something (a viewer's session turns them off).
func (*Pane) Help(k *uictx.KeyMap) uictx.PaneHelp {
	wk := &k.Workers
	return uictx.PaneHelp{
		Keys: []*key.Binding{&k.Spawn, &wk.Open, &wk.Stop, &wk.Pause, &wk.Tell, &wk.Interrupt, &wk.Mark, &wk.Logs, &wk.Diff},
		Legends: []uictx.Legend{{Title: "Workers", Rows: [][2]string{
			{"● live", "its heartbeat is fresh"}, {"◌ stale", "silent for two heartbeats"},
			{"✗ dead", "its process is gone"}, {"exited N", "finished with exit status N"},
			{"○ starting", "spawned here, no state file yet"}, {"⏸ paused", "its run is stopped where it is (its budget, or p); the detail says why"},
			{Asking, "its agent asked a question or for permission: answer it in the inbox (7)"},
			{"1–4", "marked for logs (space marks, l opens)"}}}},
		Acts: []uictx.Act{{Key: &wk.Stop, Verb: "stop a worker"}, {Key: &wk.Pause, Verb: "pause a worker"},
			{Key: &wk.Tell, Verb: "tell a worker"}, {Key: &wk.Interrupt, Verb: "interrupt a worker"}},
	}
}
