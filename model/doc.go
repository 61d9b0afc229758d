// Package model owns fleetwatch's nouns (plans, headers, leases, workers, tiers)
// and the pure rules over them: header parsing, fit, dependencies, ready order and
// the bare pick. It never reads a file or a clock; callers pass what the disk and
// git said, and the time.
package model
