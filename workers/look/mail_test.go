package look

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

func TestMailReachesTheDriverAndItsReplyTheSender(t *testing.T) {
	project := t.TempDir()
	box, err := OpenMailbox(project, "w-1")
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	go func() {
		for m := range box.Messages() {
			box.Reply(m.ID, MailReply{Outcome: MailSteered, Reason: "heard: " + m.Text})
		}
	}()
	start := time.Now()
	rep, err := SendMail(context.Background(), project, "w-1", claims.Message{ID: "a1", Kind: claims.MailTell, Text: "use v2\x1b[31m", By: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); rep.Outcome != MailSteered || rep.Reason != "heard: use v2[31m" || took > time.Second {
		t.Fatalf("reply %+v after %v; want steered with the note, escape removed, within 1s", rep, took)
	}
	if left, _ := os.ReadDir(filepath.Join(project, MailDir, "w-1")); len(left) != 0 {
		t.Fatalf("the mail folder keeps %d files after the exchange", len(left))
	}
}

func TestMailNobodyTakesIsTakenBack(t *testing.T) {
	project := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := SendMail(ctx, project, "w-1", claims.Message{ID: "a1", Kind: claims.MailTell, Text: "hello", By: "ann"}); err == nil {
		t.Fatal("a message nobody took was said to be taken")
	}
	if left, _ := os.ReadDir(filepath.Join(project, MailDir, "w-1")); len(left) != 0 {
		t.Fatalf("an untaken message stayed for the next driver: %d files", len(left))
	}
}

func TestMailRefusesWhatIsNoMessage(t *testing.T) {
	project := t.TempDir()
	if _, err := SendMail(context.Background(), project, "w-1", claims.Message{ID: "a1", Kind: "reboot", By: "ann"}); err == nil {
		t.Fatal("a message of unknown kind was sent")
	}
	dir := filepath.Join(project, MailDir, "w-1")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "1-junk.json"), []byte("{not json"), 0o600)
	box, err := OpenMailbox(project, "w-1")
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	// A leftover of a dead driver's time is refused at open, never handed on.
	if rep, ok := readReply(filepath.Join(dir, "1-junk.reply")); !ok || rep.Outcome != MailRefused {
		t.Fatalf("the leftover got %+v, want refused", rep)
	}
	select {
	case m := <-box.Messages():
		t.Fatalf("junk reached the driver: %+v", m)
	case <-time.After(100 * time.Millisecond):
	}
}

// Each message reaches the driver once, however quickly its sender takes
// the reply away.
func TestMailEachMessageOnce(t *testing.T) {
	project := t.TempDir()
	box, err := OpenMailbox(project, "w-1")
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	seen := make(chan string, 100)
	go func() {
		for m := range box.Messages() {
			seen <- m.ID
			box.Reply(m.ID, MailReply{Outcome: MailSteered})
		}
	}()
	const n = 40
	for i := range n {
		id := "m" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		if _, err := SendMail(context.Background(), project, "w-1", claims.Message{ID: id, Kind: claims.MailTell, Text: "x", By: "ann"}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond) // a message handed on twice comes now
	if got := len(seen); got != n {
		t.Fatalf("%d messages reached the driver for %d sent", got, n)
	}
}

// BenchmarkMailRoundTrip is a note's way to a driver on this machine and
// its reply back: written whole, seen by the driver's watch, answered.
func BenchmarkMailRoundTrip(b *testing.B) {
	project := b.TempDir()
	box, err := OpenMailbox(project, "w-1")
	if err != nil {
		b.Fatal(err)
	}
	defer box.Close()
	go func() {
		for m := range box.Messages() {
			box.Reply(m.ID, MailReply{Outcome: MailSteered})
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := claims.Message{ID: claims.Nonce(), Kind: claims.MailTell, Text: "use v2", By: "ann"}
		if _, err := SendMail(context.Background(), project, "w-1", m); err != nil {
			b.Fatal(err)
		}
	}
}
