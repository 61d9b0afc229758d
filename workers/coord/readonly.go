package coord

import (
	"fmt"

	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// refuseViewer refuses a decision by a read-only role (Approver.ReadOnly)
// or through a viewer's tree (planfs.Tree.ReadOnly) before anything is
// locked or written, in one line naming the slug: the key map hides the
// keys, and the engine refuses again.
func refuseViewer(t *planfs.Tree, slug string, by Approver) error {
	if by.ReadOnly || t.Writable() != nil {
		return fmt.Errorf("%s: %w", slug, viewerError{})
	}
	// A decision is a person's: never one an agent or a check started,
	// however its environment was cleaned.
	if why := sandbox.AgentRun(); why != "" {
		return fmt.Errorf("%s: refused: only a person decides a proposal, and %s", slug, why)
	}
	return nil
}

// viewerError is a viewer's refusal: errors.Is matches both this
// package's ErrReadOnly and planfs.ErrReadOnly, so every face tells it
// apart the same way.
type viewerError struct{}

func (viewerError) Error() string { return ErrReadOnly.Error() }

func (viewerError) Is(target error) bool {
	return target == ErrReadOnly || target == planfs.ErrReadOnly
}
