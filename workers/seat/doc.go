// Package seat owns an agent's seat in a project, taken and given back
// safely: its worktree made or reused for a plan (Ensure, which hands a
// branch over from an agent that held it), its removal with its port and
// registry entry (Remove), and the backend fleetwatch.yaml's `worktree:`
// section sets up per worktree (PrepareBackend, OwnBackend, teardown).
package seat
