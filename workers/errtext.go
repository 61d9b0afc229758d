package workers

import (
	"errors"
	"os"
)

// errText drops the path an *os.PathError repeats.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
