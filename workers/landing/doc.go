// Package landing carries a finished change from review-needed/ onto the
// integration branch: its candidates and their states (derived from git and
// the files under var/fleet/ each time they are read, never stored), peer
// reviews at a frozen commit, the project's checks on the exact tree that
// would land, and the merge queue a person drives (one change at a time,
// or in batches checked once and bisected to the change that fails them),
// whose only write to the integration branch is a compare-and-swap to a
// commit whose exact tree passed every check. Plans move only through
// planfs's verbs.
package landing
