package model

// Lane is a top-level directory of the .plans/ tree.
type Lane string

const (
	Drafts       Lane = "drafts"
	Bugs         Lane = "bugs"
	Features     Lane = "features"
	InProgress   Lane = "in-progress"
	ReviewNeeded Lane = "review-needed"
	Ambiguous    Lane = "ambiguous"
	Blocked      Lane = "blocked"
	Completed    Lane = "completed"
)

// Lanes lists every lane in board order.
var Lanes = []Lane{Drafts, Bugs, Features, InProgress, ReviewNeeded, Ambiguous, Blocked, Completed}

// ParseLane returns the lane named s.
func ParseLane(s string) (Lane, bool) {
	for _, l := range Lanes {
		if string(l) == s {
			return l, true
		}
	}
	return "", false
}

// Ready reports whether plans in l may be picked.
func (l Lane) Ready() bool { return l == Bugs || l == Features }

// Parked reports whether l holds plans set aside by an agent or operator.
func (l Lane) Parked() bool { return l == Ambiguous || l == Blocked }

// Open reports whether a plan in l is unfinished work, so a dependency on it is unmet.
func (l Lane) Open() bool {
	switch l {
	case Drafts, Bugs, Features, InProgress, ReviewNeeded, Ambiguous, Blocked:
		return true
	}
	return false
}
