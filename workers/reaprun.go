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
	if all, _ := proc.AgentProcs(agent, exited); len(all) > 0 {
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
	if proc.SignalAgent(agent, exited, syscall.SIGTERM) == 0 && gone() {
		return
	}
	deadline := time.Now().Add(d.Grace)
	for !gone() {
		if time.Now().After(deadline) {
			d.Log.Printf("agent processes still running after %v; killing them", d.Grace)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
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
