package workers

// MaxTouched bounds State.Touched: a build that touches more is listed in
// part, with the rest counted.
const MaxTouched = 500

// Overlap is two running workers whose changes touch the same paths (the
// overlap radar).
type Overlap struct {
	A, B  string   // agent ids, A < B
	Paths []string // the paths both touch, sorted
	// Checked says git merge-tree was asked whether the two changes, as
	// they stand in their worktrees, merge; Conflict is its answer and
	// Conflicts the paths it could not merge.
	Checked   bool
	Conflict  bool
	Conflicts []string
	// Note says why it could not be checked, when it could not.
	Note string
}

// Overlaps finds the running workers of states (their Touched lists) that
// touch the same paths, and asks git whether each pair's changes conflict.
func Overlaps(project string, states []State) []Overlap {
	return nil // TODO(scope helper)
}
