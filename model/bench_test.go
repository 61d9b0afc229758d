package model_test

// Benchmarks for the pure rules on in-memory snapshots of 1k, 10k and 100k
// plans: ns/plan should stay flat from 10k to 100k (no quadratic step).
//
// An external test package, because plangen imports model.

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/plangen"
	"github.com/fleetwatch/fleetwatch/model"
)

var benchNow = time.Now()

// benchSnapshots holds each size's snapshot for the whole process: 100k
// headers take a while to parse, and Decide never changes a snapshot.
var benchSnapshots struct {
	sync.Mutex
	m map[int]*model.Snapshot
}

// benchSnapshot is what a scan of the generated n-plan tree would return:
// plans with parsed headers and spread mtimes, a lease per in-progress plan.
func benchSnapshot(n int) *model.Snapshot {
	benchSnapshots.Lock()
	defer benchSnapshots.Unlock()
	if s := benchSnapshots.m[n]; s != nil {
		return s
	}
	s := &model.Snapshot{Plans: make([]model.Plan, n)}
	for i := range n {
		lane, name := plangen.Lane(i), plangen.File(i)
		text := plangen.Text(i, n)
		rel := string(lane) + "/" + name
		s.Plans[i] = model.Plan{
			Rel: rel, Lane: lane, Name: name, Slug: model.SlugOf(name), Local: strings.HasSuffix(name, ".local.md"),
			ModTime: plangen.ModTime(i, benchNow).UnixNano(),
			Size:    int64(len(text)), Header: model.ParseHeader(text),
		}
		if lane == model.InProgress {
			l := plangen.Lease(i, benchNow)
			l.Rel, l.File = rel, model.LeaseFileName(rel)
			s.Leases = append(s.Leases, l)
		}
	}
	if benchSnapshots.m == nil {
		benchSnapshots.m = map[int]*model.Snapshot{}
	}
	benchSnapshots.m[n] = s
	return s
}

// benchHistory stands in for git: half the retired plans were completed.
func benchHistory(slug string) bool {
	k, err := strconv.Atoi(strings.TrimPrefix(slug, "retired-plan-"))
	return err == nil && k%2 == 0
}

func BenchmarkParseHeader(b *testing.B) {
	// A typical plan: about 2 KB, every header field, dependencies.
	var text string
	for i := 0; text == ""; i++ {
		t := plangen.Text(i, 1000)
		if len(t) >= 1900 && len(t) <= 2200 && strings.Contains(t, "- **Depends on:**") &&
			strings.Contains(t, "- **Preferred models:**") && strings.Contains(t, "- **Assignee:**") {
			text = t
		}
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		model.ParseHeader(text)
	}
}

func BenchmarkDecide(b *testing.B) {
	w := model.Worker{AgentID: "bench", Tier: model.Mid}
	for _, s := range plangen.Sizes {
		b.Run(s.Name, func(b *testing.B) {
			snap := benchSnapshot(s.N)
			opt := model.Options{Now: float64(benchNow.Unix()), History: benchHistory}
			eligible := 0
			for b.Loop() {
				eligible = len(model.Picks(model.Decide(snap, w, opt), nil))
			}
			if eligible == 0 {
				b.Fatal("nothing eligible: the generated tree is not realistic")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(s.N), "ns/plan")
		})
	}
}

// BenchmarkBoard judges every plan for all four tiers at once, as the UI
// and `board` do on every refresh.
func BenchmarkBoard(b *testing.B) {
	for _, s := range plangen.Sizes {
		b.Run(s.Name, func(b *testing.B) {
			snap := benchSnapshot(s.N)
			opt := model.Options{Now: float64(benchNow.Unix()), History: benchHistory}
			for b.Loop() {
				model.NewBoard(snap, opt)
			}
		})
	}
}
