package look

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

// change waits for the watcher's next change.
func change(t *testing.T, w *StateWatcher, what string) {
	t.Helper()
	select {
	case c, ok := <-w.Changes():
		if !ok {
			t.Fatalf("%s: the watcher closed", what)
		}
		if c.Err != nil {
			t.Fatalf("%s: %v", what, c.Err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no change in 10 s", what)
	}
}

func noChange(t *testing.T, w *StateWatcher, what string) {
	t.Helper()
	select {
	case c := <-w.Changes():
		t.Errorf("%s: a change %+v", what, c)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestWatchStatesFromBeforeTheFolderExists(t *testing.T) {
	t.Parallel()
	project := testkit.Project(t)
	w, err := WatchStates(project, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(project, "README.md"), []byte("x"), 0o644)
	noChange(t, w, "a file elsewhere in the project")

	st := State{AgentID: "mid-1", PID: 1, State: StateRunning}
	if err := WriteState(project, st); err != nil { // makes var/fleet/workers/
		t.Fatal(err)
	}
	change(t, w, "the first state file")
	// Now the folder itself is watched: each write is seen, debounced.
	for i := range 20 {
		st.Note = "beat " + string(rune('a'+i))
		if err := WriteState(project, st); err != nil {
			t.Fatal(err)
		}
	}
	change(t, w, "heartbeats")
	// A burst is one change, or a few when it outlasts 4×debounce on a
	// loaded machine; never one per write.
	extra := 0
	for done := false; !done; {
		select {
		case <-w.Changes():
			extra++
		case <-time.After(300 * time.Millisecond):
			done = true
		}
	}
	if extra >= 19 {
		t.Errorf("20 writes gave %d changes", extra+1)
	}
	os.MkdirAll(filepath.Join(project, "var", "fleet", "logs"), 0o755)
	os.WriteFile(filepath.Join(project, "var", "fleet", "logs", "mid-1.log"), []byte("x\n"), 0o644)
	noChange(t, w, "a log line")

	// The folder goes, and comes back.
	if err := os.RemoveAll(filepath.Join(project, "var")); err != nil {
		t.Fatal(err)
	}
	change(t, w, "the folder removed")
	if err := WriteState(project, State{AgentID: "mid-2", State: StateRunning}); err != nil {
		t.Fatal(err)
	}
	change(t, w, "the folder made again")
	if err := os.Remove(StatePath(project, "mid-2")); err != nil {
		t.Fatal(err)
	}
	change(t, w, "a state file removed")

	w.Close()
	if _, ok := <-w.Changes(); ok {
		t.Error("Changes is still open after Close")
	}
	w.Close()
}
