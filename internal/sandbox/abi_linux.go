package sandbox

import (
	"fmt"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// landlockABI asks the kernel for its Landlock ABI, refusing one older
// than minABI.
func landlockABI() (int, error) {
	abi, err := llsyscall.LandlockGetABIVersion()
	if err != nil {
		return 0, fmt.Errorf("the kernel has no Landlock (%v)", err)
	}
	if abi < minABI {
		return abi, fmt.Errorf("the kernel's Landlock ABI %d is older than %d", abi, minABI)
	}
	return abi, nil
}
