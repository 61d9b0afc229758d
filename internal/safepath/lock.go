package safepath

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Lock holds an exclusive flock(2) on the lock file root/rel (made, with
// its folders, if missing; never through a symlink) until unlock is called;
// the kernel drops it if the holder dies. wait 0 waits as long as it takes;
// otherwise a lock still held after wait is an error naming the file.
func Lock(root, rel string, wait time.Duration) (unlock func(), err error) {
	f, err := OpenFile(root, rel, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if wait == 0 {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			return nil, &Error{Rel: rel, Err: err}
		}
		return func() { f.Close() }, nil
	}
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				err = fmt.Errorf("still held by another process after %v", wait)
			}
			return nil, &Error{Rel: rel, Err: err}
		}
		time.Sleep(5 * time.Millisecond)
	}
}
