// Package serve is `fleetwatch serve`: one project's cockpit over SSH for a
// whole team, on charmbracelet/wish. It owns the SSH server (host key,
// authorized operator and viewer keys, re-read when they change), gives
// every session its own UI model and Lip Gloss renderer for the client's
// terminal, feeds all of them from one ui.Hub, and answers a session
// without a PTY with the board as text.
package serve
