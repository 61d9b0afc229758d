package sandbox

import "syscall"

// SetPdeathsig has the kernel send sig to the child attr starts when the
// thread that started it dies, so it never runs on unwatched.
func SetPdeathsig(attr *syscall.SysProcAttr, sig syscall.Signal) { attr.Pdeathsig = sig }

// DropsCapabilities says Spawn leaves a root agent no capability.
const DropsCapabilities = true
