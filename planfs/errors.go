package planfs

import (
	"errors"
	"fmt"
)

// Sentinel errors that faces turn into their own words and exit codes; the
// wrapping error names the plan.
var (
	ErrNotFound   = errors.New("not found")
	ErrClaimed    = errors.New("already claimed")
	ErrNotOwner   = errors.New("not the owner")
	ErrNoLease    = errors.New("no active lease")
	ErrDestExists = errors.New("destination already exists")
	ErrBadTarget  = errors.New("not a target for this verb")
	ErrWrongLane  = errors.New("plan is in the wrong lane for this verb")
	ErrNeedsForce = errors.New("needs force")

	// A named claim's refusals: "not for you", as opposed to "broken".
	ErrAssigned   = errors.New("assigned to a person")
	ErrDepsUnmet  = errors.New("dependencies unmet")
	ErrAmbiguous  = errors.New("ambiguous slug")
	ErrUnreadable = errors.New("unreadable plan")
	ErrNoTree     = errors.New("no plan tree")
	// ErrUnclaimable is a plan no claim can take as it is named (see
	// model.ClaimProblem); renaming it fixes it.
	ErrUnclaimable = errors.New("cannot be claimed")
	// ErrEmptyPlan refuses to write a ready plan no one will edit whose Goal
	// or Done when is empty (model.Header.BlankProblem): no agent takes it.
	ErrEmptyPlan = errors.New("empty goal or done when")
	// ErrReadOnly refuses any change asked through a read-only tree (a
	// viewer's): viewers see everything and act on nothing.
	ErrReadOnly = errors.New("read-only: a viewer cannot change anything")
)

// PlanError names the plan a verb failed on; Err is the sentinel (or cause)
// faces test with errors.Is, Detail the words.
type PlanError struct {
	Rel    string
	Err    error
	Detail string
}

func (e *PlanError) Error() string { return e.Rel + ": " + e.Detail }

func (e *PlanError) Unwrap() error { return e.Err }

func planErr(rel string, err error, format string, args ...any) error {
	return &PlanError{Rel: rel, Err: err, Detail: fmt.Sprintf(format, args...)}
}

// noTreeError is Open's error: its words name the folder, errors.Is matches ErrNoTree.
type noTreeError string

func (e noTreeError) Error() string { return string(e) }

func (noTreeError) Is(target error) bool { return target == ErrNoTree }
