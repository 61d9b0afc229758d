package claims

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestPickReadableFirstPerHost: 3,000 readable records under aaa and 2,100
// unreadable ones under hosts of their own, all sorting first, leave room
// for every genuine worker: aaa gives 256, the unreadable take what is left.
func TestPickReadableFirstPerHost(t *testing.T) {
	var recs []Published
	for i := range 3000 {
		recs = append(recs, Published{WorkerRecord: WorkerRecord{Host: "aaa", AgentID: fmt.Sprintf("j%04d", i)}})
	}
	for i := range 2100 {
		recs = append(recs, Published{WorkerRecord: WorkerRecord{Host: fmt.Sprintf("ab%04d", i), AgentID: "x"}, Problem: "junk"})
	}
	for i := range 10 {
		recs = append(recs, Published{WorkerRecord: WorkerRecord{Host: "host-b", AgentID: fmt.Sprintf("w%d", i)}})
	}
	keep, more := Pick(recs)
	shown := map[string]int{}
	unreadable := 0
	for i, k := range keep {
		if !k {
			continue
		}
		shown[recs[i].Host]++
		if recs[i].Problem != "" {
			unreadable++
		}
	}
	if shown["aaa"] != MaxWorkersPerHost || shown["host-b"] != 10 {
		t.Errorf("shown aaa %d, host-b %d; want %d and 10", shown["aaa"], shown["host-b"], MaxWorkersPerHost)
	}
	if want := MaxWorkers - MaxWorkersPerHost - 10; unreadable != want || more != len(recs)-MaxWorkers {
		t.Errorf("unreadable shown %d (want %d), more %d (want %d)", unreadable, want, more, len(recs)-MaxWorkers)
	}
}

// TestJudgeBoundsTheRecordsPace: a record's own heartbeat and TTL count
// up to MaxPace times the reader's; past that it is dead however long it
// says its lease is.
func TestJudgeBoundsTheRecordsPace(t *testing.T) {
	slow := WorkerRecord{State: WorkerRunning, HeartbeatEvery: 1e7, TTL: 1e7}
	for _, c := range []struct {
		rec  WorkerRecord
		seen time.Duration
		want string
	}{
		{slow, time.Minute, HealthLive},
		{slow, 2*MaxPace*JudgeHeartbeat + time.Second, HealthStale},
		{slow, MaxPace*DefaultTTL + time.Second, HealthDead},
		{WorkerRecord{State: WorkerRunning, HeartbeatEvery: math.NaN(), TTL: math.Inf(1)}, MaxPace*DefaultTTL + time.Second, HealthDead},
		{WorkerRecord{State: WorkerRunning, HeartbeatEvery: 3, TTL: 9}, 7 * time.Second, HealthStale},
		{WorkerRecord{State: WorkerRunning}, 2 * time.Minute, HealthStale},
	} {
		if got := Judge(c.rec, c.seen); got != c.want {
			t.Errorf("Judge(every %v, ttl %v, seen %v) = %s, want %s", c.rec.HeartbeatEvery, c.rec.TTL, c.seen, got, c.want)
		}
	}
}
