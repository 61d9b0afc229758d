package landing_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/demo"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// BenchmarkDemoFirstLanding is the demo's first landing end to end (m on
// the Merge pane): csv-import built on dev, jotter's real go vet and go
// test run contained, reading the operator's own GOCACHE through the
// lander's cache program, and the swap (target ≤ 20 s). With
// FLEETWATCH_BENCH_COLD=1 the checks start from an empty cache instead
// (checks_cache: {go: false}), as before the trusted layer.
func BenchmarkDemoFirstLanding(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		project, err := demo.Create(filepath.Join(b.TempDir(), "jotter"), time.Now(), []string{"/bin/true"})
		if err != nil {
			b.Fatal(err)
		}
		if os.Getenv("FLEETWATCH_BENCH_COLD") != "" {
			p := filepath.Join(project, "fleetwatch.yaml")
			old, _ := os.ReadFile(p)
			os.WriteFile(p, append(old, "checks_cache: {go: false}\n"...), 0o644)
		}
		t, err := planfs.Open(project)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		var log strings.Builder
		l, err := landing.Land(context.Background(), t, landing.LandOptions{Actor: "operator-bench", Log: &log})
		if err != nil || l.Slug != "csv-import" {
			b.Fatalf("land: %+v %v\n%s", l, err, log.String())
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/first-landing")
		b.Logf("%s", log.String())
	}
}
