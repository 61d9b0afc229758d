package notify

import (
	"strconv"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
)

// benchNotifier has one webhook target (never reached: nothing is sent)
// and a record claiming n notices for it.
func benchNotifier(b *testing.B, n int) (*Notifier, *target, []model.Notice) {
	project := b.TempDir()
	nt := New(project, config.Notify{Webhooks: []config.Webhook{{Name: "team", URL: "http://127.0.0.1:9/", Format: "json"}}},
		Options{Project: "p", Host: "h"})
	t := nt.targets[0]
	var ns []model.Notice
	var lines []Line
	for i := range n {
		x := model.Notice{ID: "review:features/plan-" + strconv.Itoa(i) + ".md", Kind: model.NoticeReview, Text: "plan waits for review"}
		ns = append(ns, x)
		lines = append(lines, Line{To: "team", State: Claimed, Msg: strconv.Itoa(i), IDs: []string{x.ID}})
	}
	release, err := nt.rec.hold()
	if err != nil {
		b.Fatal(err)
	}
	if err := nt.rec.add(lines...); err != nil {
		b.Fatal(err)
	}
	release()
	return nt, t, ns
}

// What each look of the cockpit costs a target when its 1,000 notices
// were all sent already: the hand-over is dropped before any lock.
func BenchmarkOfferAlreadySent1000(b *testing.B) {
	n, t, ns := benchNotifier(b, 1000)
	b.ResetTimer()
	for b.Loop() {
		if p := n.keep(t, nil, ns); len(p) != 0 {
			b.Fatalf("%d pending", len(p))
		}
	}
}

// Claiming one new notice against a record of 10,000 messages: the lock,
// catching up with the file, the rate's count and the append.
func BenchmarkClaimNew(b *testing.B) {
	n, t, _ := benchNotifier(b, 10000)
	t.perMinute = 1 << 30
	i := 0
	b.ResetTimer()
	for b.Loop() {
		i++
		msgs, _, _, err := n.claim(t, []model.Notice{{ID: "new-" + strconv.Itoa(i), Kind: model.NoticeReview}})
		if err != nil || len(msgs) != 1 {
			b.Fatalf("%v %d", err, len(msgs))
		}
	}
}
