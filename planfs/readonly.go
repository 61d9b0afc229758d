package planfs

// A viewer's tree (Tree.ReadOnly, an SSH session with a viewer's key) sees
// everything and changes nothing. The refusal is in the engine, not only in
// a face's key map: every exported verb that writes asks Writable before it
// touches the disk, and so do writable and lockLeases, which every write
// path passes through, so a verb added later is refused even if it forgets.

// Writable is nil for a tree verbs may change, ErrReadOnly for a viewer's.
func (t *Tree) Writable() error {
	if t.ReadOnly {
		return ErrReadOnly
	}
	return nil
}

// refuse is Writable's refusal naming what the verb would have changed
// (a plan's rel, a slug), one line.
func (t *Tree) refuse(what string) error {
	if !t.ReadOnly {
		return nil
	}
	return planErr(what, ErrReadOnly, "%v", ErrReadOnly)
}
