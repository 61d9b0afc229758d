package tree

import (
	"errors"
	"os"
)

// ErrText drops the path an *os.PathError repeats.
func ErrText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
