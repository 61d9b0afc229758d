package model

import (
	"fmt"
	"slices"
	"strings"
)

// Verb names an action that moves a plan or acts on its lease.
type Verb string

const (
	Claim    Verb = "claim"
	Promote  Verb = "promote"
	Park     Verb = "park"
	Return   Verb = "return"
	Release  Verb = "release"
	Recover  Verb = "recover"
	Complete Verb = "complete"
	// The landing verbs take a finished change out of review-needed/.
	SendBack Verb = "send-back"
	Defer    Verb = "defer"
	Land     Verb = "land"
)

// VerbRule is where a verb takes a plan from and where it may send it: the
// one table planfs enforces, the CLI resolves slugs through and the UI
// offers choices from.
type VerbRule struct {
	Verb Verb
	// From lists the lanes a plan may be in, in the order a bare slug is
	// looked up.
	From []Lane
	// ReadyLease is set for the verbs that also act on a ready plan's
	// ready-path lease (what a claim cut short leaves): release and recover.
	ReadyLease bool
	// To lists the lanes a caller may send the plan to; empty when the verb
	// decides (release and return go back where the plan came from) or the
	// plan stays (recover).
	To []Lane
	// Default is the target when the caller names none; "" when To is empty
	// or a target is required.
	Default Lane
	// Done describes the plans it takes, for refusals: "only drafts can be
	// promoted".
	Done string
}

// verbRules is the table.
var verbRules = []VerbRule{
	{Verb: Claim, From: []Lane{Bugs, Features}, Done: "only plans in bugs/ or features/ can be claimed"},
	{Verb: Promote, From: []Lane{Drafts}, To: []Lane{Bugs, Features}, Done: "only drafts can be promoted"},
	{Verb: Park, From: []Lane{InProgress, Bugs, Features}, To: []Lane{Ambiguous, Blocked}, Done: "only plans in bugs/, features/ or in-progress/ can be parked"},
	{Verb: Return, From: []Lane{Ambiguous, Blocked, InProgress}, To: []Lane{Bugs, Features}, Done: "only parked or claimed plans can be returned"},
	{Verb: Release, From: []Lane{InProgress}, ReadyLease: true, Done: "only claimed plans can be released"},
	{Verb: Recover, From: []Lane{InProgress}, ReadyLease: true, Done: "only in-progress plans and ready-path leases can be recovered"},
	{Verb: Complete, From: []Lane{InProgress}, To: []Lane{Completed, ReviewNeeded}, Default: Completed, Done: "only in-progress plans can be completed"},
	{Verb: SendBack, From: []Lane{ReviewNeeded}, Done: "only plans in review-needed/ can be sent back"},
	{Verb: Defer, From: []Lane{ReviewNeeded}, To: []Lane{Blocked}, Default: Blocked, Done: "only plans in review-needed/ can be deferred"},
	{Verb: Land, From: []Lane{ReviewNeeded}, To: []Lane{Completed}, Default: Completed, Done: "only plans in review-needed/ can be landed"},
}

// RuleOf is v's row of the table.
func RuleOf(v Verb) VerbRule {
	for _, r := range verbRules {
		if r.Verb == v {
			return r
		}
	}
	panic("model: no rule for verb " + string(v)) // a programming error, never user data
}

// Takes reports whether the verb acts on a plan (or its ready-path lease)
// in l.
func (r VerbRule) Takes(l Lane) bool { return slices.Contains(r.From, l) || r.ReadyLease && l.Ready() }

// Lookup is where a bare slug for the verb is looked up: From, then the
// ready lanes for a verb that takes a ready-path lease.
func (r VerbRule) Lookup() []Lane {
	out := append([]Lane(nil), r.From...)
	if r.ReadyLease {
		out = append(out, Bugs, Features)
	}
	return out
}

// FromAny is the lanes any of verbs takes a plan from, in their order, each
// once: where a slug for one of several verbs is looked up.
func FromAny(verbs ...Verb) []Lane {
	var out []Lane
	for _, v := range verbs {
		for _, l := range RuleOf(v).From {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// Sends reports whether a caller may send the plan to l.
func (r VerbRule) Sends(l Lane) bool { return slices.Contains(r.To, l) }

// CheckTarget says why to is not a target of the verb ("" when it is):
// "park target must be ambiguous or blocked, not bugs".
func (r VerbRule) CheckTarget(to Lane) string {
	if r.Sends(to) {
		return ""
	}
	return fmt.Sprintf("%s target must be %s, not %s", r.Verb, Alternatives(r.To), to)
}

// Alternatives joins lanes as "a or b", "a, b or c".
func Alternatives(lanes []Lane) string {
	names := make([]string, len(lanes))
	for i, l := range lanes {
		names[i] = string(l)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
