package sandbox

import "syscall"

// SetPdeathsig does nothing: macOS has no parent-death signal, so a child
// outlives a starter killed with kill -9.
func SetPdeathsig(attr *syscall.SysProcAttr, sig syscall.Signal) {}

// DropsCapabilities is false: macOS has no capabilities to drop, so a
// root agent keeps every privilege root has.
const DropsCapabilities = false
