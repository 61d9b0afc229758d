// Package serve is `fleetwatch serve`: one project's cockpit over SSH for a
// whole team, on charmbracelet/wish. It owns the SSH server (host key,
// authorized operator and viewer keys with their options, re-read when
// they change and applied to open sessions), gives every session its own
// UI model and Lip Gloss renderer for the client's terminal on a PTY it
// frees when the session ends, feeds all of them from one ui.Hub, answers
// a session without a PTY with the board as text, and bounds everything a
// client controls (terminal size, environment, sessions, logins).
package serve
