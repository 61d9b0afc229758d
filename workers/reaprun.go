package workers

import (
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// stopAgent ends the agent and everything it left running: SIGTERM, then
// SIGKILL once grace has passed. done delivers the agent's own exit (nil
// once it has been received). It returns when nothing is left, or a few
// seconds after SIGKILL when something cannot be killed (a process stuck in
// the kernel).
func (d *Driver) stopAgent(agent int, done <-chan error) {
	exited := done == nil
	gone := func() bool {
		if !exited {
			select {
			case <-done:
				exited = true
			default:
			}
		}
		return exited && proc.CountRunning(agent, true) == 0
	}
	d.sayLeftovers(agent, exited)
	if proc.SignalAgent(agent, exited, syscall.SIGTERM) == 0 && gone() {
		return
	}
	d.waitGrace(gone)
	// Stragglers that ignored SIGTERM, and anything started meanwhile.
	proc.SignalAgent(agent, exited, syscall.SIGKILL)
	if !exited {
		<-done
		exited = true
	}
	limit := time.Now().Add(3 * time.Second)
	for !gone() && time.Now().Before(limit) {
		proc.SignalAgent(agent, true, syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
}

// sayLeftovers logs the processes the agent started that are running
// besides it.
func (d *Driver) sayLeftovers(agent int, exited bool) {
	all, _ := proc.AgentProcs(agent, exited)
	var left []string
	for _, pid := range all {
		if pid != agent {
			left = append(left, strconv.Itoa(pid))
		}
	}
	if len(left) > 0 {
		d.Log.Printf("stopping what the agent started: pid %s", strings.Join(left, ", "))
	}
}

// waitGrace polls until gone, for at most the grace after SIGTERM.
func (d *Driver) waitGrace(gone func() bool) {
	deadline := time.Now().Add(d.Grace)
	for !gone() {
		if time.Now().After(deadline) {
			d.Log.Printf("agent processes still running after %v; killing them", d.Grace)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
