package workers

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// remoteClones is a bare remote with a dev branch and n clones of it,
// each with the git claims backend open.
func remoteClones(t *testing.T, n int) (dirs []string, fleets []claims.Fleet) {
	root := t.TempDir()
	bare, seed := filepath.Join(root, "remote.git"), filepath.Join(root, "seed")
	gitT(t, root, "init", "-q", "--bare", "-b", "dev", bare)
	gitT(t, root, "clone", "-q", bare, seed)
	plansIn(t, seed)
	gitT(t, seed, "push", "-q", "origin", "HEAD:dev")
	for i := range n {
		dir := filepath.Join(root, fmt.Sprint("clone", i))
		gitT(t, root, "clone", "-q", bare, dir)
		b, err := claims.Open(claims.Config{Backend: "git", Project: dir, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		dirs, fleets = append(dirs, dir), append(fleets, b.(claims.Fleet))
	}
	return dirs, fleets
}

// TestFleetMailReachesTheDriver: notes sent from another clone reach the
// driver's fleetMail once each, in order, though the driver publishes no
// heartbeat meanwhile (the backend's word that its ref moved makes it
// publish); a note sent twice comes once; an answer keeps its fields; the
// question the run asks is in its published record.
func TestFleetMailReachesTheDriver(t *testing.T) {
	t.Parallel()
	dirs, fleets := remoteClones(t, 2)
	log, err := look.OpenLog(dirs[0], "w1", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &Driver{Tree: &planfs.Tree{Project: dirs[0]}, Worker: model.Worker{AgentID: "w1"}, Log: log}
	d.state = look.State{AgentID: "w1", Host: "gpu-box", State: look.StateRunning, HeartbeatEvery: 60,
		Asking: &claims.AskRecord{ID: "ask-1", Question: "May I run make?", Options: []claims.AskOption{{ID: "yes", Label: "Allow", Allow: true}, {ID: "no", Label: "Deny"}}}}
	if d.fleetMail() != nil {
		t.Fatal("a driver that publishes nothing has mail")
	}
	d.PublishTo(fleets[0], time.Minute)
	defer d.endPublishing()
	sender := fleets[1]
	ctx := context.Background()
	var p claims.Published
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if p, err = sender.Worker(ctx, "gpu-box", "w1"); err == nil {
			break
		}
	}
	if err != nil || p.Asking == nil || p.Asking.ID != "ask-1" || len(p.Asking.Options) != 2 {
		t.Fatalf("the published record: %+v (%v)", p.Asking, err)
	}
	note := claims.Message{ID: claims.Nonce(), Kind: claims.MailTell, Text: "use the fixtures\nin testdata", By: "op", Host: "desk"}
	answer := claims.Message{ID: claims.Nonce(), Kind: claims.MailAnswer, Ask: "ask-1", Option: "yes", By: "op"}
	start := time.Now()
	for _, m := range []claims.Message{note, note, answer} {
		if err := sender.Send(ctx, "gpu-box", "w1", m); err != nil {
			t.Fatal(err)
		}
	}
	var got []claims.Message
	timeout := time.After(15 * time.Second)
	for len(got) < 2 {
		select {
		case m := <-d.fleetMail():
			got = append(got, m)
		case <-timeout:
			t.Fatalf("heard %d of 2 messages in 15 s with no heartbeat", len(got))
		}
	}
	t.Logf("two messages from another clone reached fleetMail %v after the first Send, with no heartbeat", time.Since(start).Round(time.Millisecond))
	if got[0].ID != note.ID || got[0].Text != note.Text || got[0].Run != d.fleet.run ||
		got[1].ID != answer.ID || got[1].Ask != "ask-1" || got[1].Option != "yes" {
		t.Fatalf("heard %+v", got)
	}
	// Sent again (as at-least-once can): dropped by the driver.
	if err := sender.Send(ctx, "gpu-box", "w1", note); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-d.fleetMail():
		t.Fatalf("a message heard twice: %+v", m)
	case <-time.After(3 * time.Second):
	}
}

// TestFleetMailWaitsForASlowDriver: a driver that does not read holds up
// nothing: messages beyond the channel's room wait in order, repeats are
// dropped however many times they come, and none is lost.
func TestFleetMailWaitsForASlowDriver(t *testing.T) {
	t.Parallel()
	p := &fleetPub{log: nil, mail: make(chan claims.Message, mailBuffer), wake: make(chan struct{}, 1), sent: make(chan struct{}),
		heard: map[string]bool{}}
	dir := t.TempDir()
	log, err := look.OpenLog(dir, "w1", nil)
	if err != nil {
		t.Fatal(err)
	}
	p.log = log
	go p.forward()
	defer close(p.sent)
	var want []string
	for batch := range 5 {
		var in claims.Inbound
		for i := range claims.MaxMail {
			id := fmt.Sprintf("m%02d-%02d", batch, i)
			want = append(want, id)
			in.Mail = append(in.Mail, claims.Message{ID: id, Kind: claims.MailTell, Text: "x", By: "op"})
		}
		p.hear(in)
		p.hear(in) // read again by the next publish
	}
	time.Sleep(100 * time.Millisecond) // the channel fills; the rest waits
	var got []string
	for len(got) < len(want) {
		select {
		case m := <-p.mail:
			got = append(got, m.ID)
		case <-time.After(5 * time.Second):
			t.Fatalf("heard %d of %d", len(got), len(want))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("heard out of order or twice: %v", got)
	}
	select {
	case m := <-p.mail:
		t.Fatalf("a repeat came through: %v", m.ID)
	case <-time.After(200 * time.Millisecond):
	}
}
