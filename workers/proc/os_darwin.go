package proc

import (
	"errors"
)

// becomeSubreaper fails: macOS has no child subreaper, so orphans an agent
// leaves go to launchd and only its process group is stopped.
func becomeSubreaper() error { return errors.New("macOS has no child subreaper") }
