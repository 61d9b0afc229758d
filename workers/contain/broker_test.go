package contain

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An agent that asks the moment it starts may connect before its driver
// has its pid: the request waits for the broker to know its agent, rather
// than being refused as a stranger's.
func TestBrokerWaitsForItsAgentToBeNamed(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "sock")
	b, err := ListenBroker(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	go func() {
		time.Sleep(200 * time.Millisecond)
		b.SetAgent(os.Getpid()) // this test stands for the agent
	}()
	go func() {
		q := <-b.Requests()
		q.Reply <- AgentReply{Plan: "in-progress/" + q.Req.Plan}
	}()
	rep, err := AskDriver(sock, AgentRequest{Verb: AskHeartbeat, Plan: "a.md"})
	if err != nil || rep.Error != "" || rep.Plan != "in-progress/a.md" {
		t.Fatalf("an early request: %+v, %v", rep, err)
	}
}
