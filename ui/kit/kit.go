// Package kit is what several of the cockpit's panes draw with: the
// scrolling table and the rows its sessions share (rowcache.go), column
// sizing, the styles, text fitting and ages, and a pane's filter. It
// knows no pane, no model and no context: panes and the root use it.
package kit
