package model_test

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/model"
)

// BenchmarkNotices is what every refresh adds for the notices at 10k
// plans: every condition, then the ones new since the last look.
func BenchmarkNotices(b *testing.B) {
	snap := benchSnapshot(10_000)
	f := model.NoticeFacts{Leases: snap.Leases, Now: float64(benchNow.Unix())}
	for i := range snap.Plans {
		f.Rows = append(f.Rows, model.BoardRow{Plan: &snap.Plans[i]})
	}
	prev := model.Conditions(f)
	b.ResetTimer()
	for range b.N {
		cur := model.Conditions(f)
		if len(model.NewNotices(prev, cur)) != 0 {
			b.Fatal("the same facts gave new notices")
		}
	}
	b.ReportMetric(float64(len(prev)), "notices")
}
