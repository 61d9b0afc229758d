package model

import "testing"

func TestVerbTable(t *testing.T) {
	for _, v := range []Verb{Claim, Promote, Park, Return, Release, Recover, Complete} {
		r := RuleOf(v)
		if r.Verb != v || len(r.From) == 0 || r.Done == "" {
			t.Errorf("%s: incomplete rule %+v", v, r)
		}
		if r.Default != "" && !r.Sends(r.Default) {
			t.Errorf("%s: default %s is not a target", v, r.Default)
		}
		for _, l := range r.From {
			if r.Sends(l) {
				t.Errorf("%s: sends a plan to the lane it takes it from (%s)", v, l)
			}
		}
	}
	if got := RuleOf(Park).CheckTarget(Bugs); got != "park target must be ambiguous or blocked, not bugs" {
		t.Errorf("park to bugs: %q", got)
	}
	if got := RuleOf(Complete).CheckTarget(ReviewNeeded); got != "" {
		t.Errorf("complete to review-needed: %q", got)
	}
	if got := Alternatives([]Lane{Bugs, Features, InProgress}); got != "bugs, features or in-progress" {
		t.Errorf("Alternatives: %q", got)
	}
	if !RuleOf(Release).Takes(Features) || RuleOf(Complete).Takes(Features) {
		t.Error("release takes a ready-path lease; complete only claimed plans")
	}
}
