package look

import "time"

// Running counts the workers of project that still run, judged at now from
// their state files: live ones, and stale ones (running but silent).
// Unreadable files are skipped; ReadStates reports them elsewhere.
func Running(project string, now time.Time) (live, stale int) {
	states, _ := ReadStates(project)
	for _, st := range states {
		switch st.Health(now) {
		case Live:
			live++
		case Stale:
			stale++
		}
	}
	return live, stale
}
