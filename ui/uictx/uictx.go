// Package uictx is the small context the cockpit's panes share, as
// soft-serve's common.Common: the options, the renderer and styles of one
// session, the key map, the sizes and the clock (Common); the reading a
// pane shows (Data); what a pane sees at each call (Ctx: the shown pane,
// the selection, the remote's view); what a pane is (Pane) and what it
// asks of the root (the requests). It knows no pane: the root registers
// them and the panes import it.
package uictx
