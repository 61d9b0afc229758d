package demo

import (
	"strconv"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/ledger"
)

// usage is a week of the fleet's runs in the usage ledger, one record for
// each turn the story has (builds, a plan first, peer reviews), so the
// Fleet pane, `usage` and `report` have something true to show. Runs on
// box-mid and cloud-reasoner are metered and priced; laptop-small's model
// runs on the laptop and costs nothing.
func (b *builder) usage() {
	type run struct {
		plan, agent, endpoint, mode, claim string
		start, took                        time.Duration // ago, and how long
		in, out                            int64
		usd                                float64
		committed                          bool
	}
	runs := []run{
		{"csv-import", "reasoner-1", "cloud-reasoner", "build", ledger.ClaimSuccess, 2 * day, 5 * time.Hour, 1_840_000, 41_000, 3.85, true},
		{"improve-performance", "mid-2", "box-mid", "build", ledger.ClaimBlocked, day - time.Hour, 20 * time.Minute, 310_000, 6_200, 0.41, false},
		{"email-reminders", "mid-2", "box-mid", "build", ledger.ClaimBlocked, day - 3*time.Hour, 30 * time.Minute, 140_000, 2_900, 0.18, false},
		{"csv-import", "reasoner-2", "cloud-reasoner", "review", "", 18*time.Hour + 20*time.Minute, 20 * time.Minute, 160_000, 3_100, 0.62, false},
		{"archive-notes", "mid-2", "box-mid", "build", ledger.ClaimSuccess, 16 * time.Hour, time.Hour, 720_000, 18_500, 0.95, true},
		{"word-count", "reasoner-1", "cloud-reasoner", "build", ledger.ClaimSuccess, 9 * time.Hour, time.Hour, 380_000, 9_800, 1.40, true},
		{"word-count", "reasoner-2", "cloud-reasoner", "review", "", 5*time.Hour + 15*time.Minute, 15 * time.Minute, 90_000, 2_400, 0.35, false},
		{"crash-on-empty-title", "small-2", "laptop-small", "build", ledger.ClaimUnspecified, 2 * time.Hour, 5 * time.Minute, 96_000, 1_100, 0, false},
		{"share-links", "reasoner-2", "cloud-reasoner", "plan", ledger.ClaimSuccess, 50 * time.Minute, 12 * time.Minute, 120_000, 4_300, 0.55, false},
	}
	endpoints := map[string][2]string{ // tier, model
		"box-mid": {"mid", "sonnet"}, "cloud-reasoner": {"reasoner", "opus"}, "laptop-small": {"small", "qwen3-8b"},
	}
	// The last day's runs are drawn into today however early it is, so the
	// header and the Fleet pane have a day's spend to show after midnight too.
	y, mo, d := b.now.Date()
	sinceMidnight := b.now.Sub(time.Date(y, mo, d, 0, 0, 0, 0, b.now.Location()))
	intoToday := func(ago time.Duration, runStart time.Duration) time.Duration {
		if runStart >= day || sinceMidnight >= day {
			return ago
		}
		return time.Duration(float64(ago) * float64(sinceMidnight) / float64(day))
	}
	for i, r := range runs {
		if b.err != nil {
			return
		}
		r.start, r.took = intoToday(r.start, r.start), intoToday(r.took, r.start)
		ep := endpoints[r.endpoint]
		exit := 0
		if r.agent == "small-2" {
			exit = 1 // its context window ran out
		}
		b.fail("usage ledger", ledger.Append(b.project, ledger.Run{
			ID: "demo-" + strconv.Itoa(i+1), Plan: r.plan, Agent: r.agent, Tier: ep[0], Endpoint: r.endpoint, Model: ep[1],
			Input: r.in, Output: r.out, CostUSD: r.usd, Priced: true, Source: ledger.Metered,
			Start: b.now.Add(-r.start), End: b.now.Add(-r.start + r.took), Exit: exit,
			Mode: r.mode, Claim: r.claim, Committed: r.committed,
		}))
	}
}
