// Package planfs is the only code that touches a project's .plans/ tree: it
// scans plans and leases into a model.Snapshot, and its verbs (claim, renew,
// release, recover, park, return, promote, complete, repair) move plans and
// write leases so that racing workers never share a plan and a killed one
// never loses one. Every move of a plan and takeover or repair of a lease
// appends a line to logs/events.jsonl (heartbeats do not: they would flood it).
// A viewer's tree (Tree.ReadOnly) reads everything and every verb refuses
// it with ErrReadOnly before changing anything (readonly.go).
package planfs
