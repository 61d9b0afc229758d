package realagenttest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/agentkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// The real Claude Code as a peer reviewer, contained: it reads the change
// with the git commands its review argv allows, and its verdict is read.
func TestClaudeCodeReviews(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	agentkit.PeerReview(t, "claude", fwtest.RealAgent(t, "claude"), "ANTHROPIC_API_KEY=sk-ant-test")
}

// The real Claude Code's plan turn, contained: its proposal, written
// outside its worktree to the file the driver names, reaches the inbox.
func TestClaudeCodePlans(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	agentkit.PlanTurn(t, "claude", fwtest.RealAgent(t, "claude"), "ANTHROPIC_API_KEY=sk-ant-test")
}
