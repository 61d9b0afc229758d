package claims

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
)

func limitsOf(t *testing.T, text string) config.Limits {
	t.Helper()
	s, err := config.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s.Limits
}

// claude is a run of the claude endpoint on host gpu.
var claude = Run{Host: "gpu", RunsAs: model.RunsAs{Tier: "reasoner", Endpoint: "claude", Provider: "anthropic"}}

func remote(r Run, live bool) Remote {
	return Remote{Lease: model.Lease{AgentID: "a", Host: r.Host, RunsAs: r.RunsAs}, Live: live}
}

// TestWhichLeasesCountAsRuns: live leases count; a dead one, a corrupt
// one and one the coordinator's inbox holds do not.
func TestWhichLeasesCountAsRuns(t *testing.T) {
	corrupt, inbox := remote(claude, true), remote(claude, true)
	corrupt.Corrupt = "not JSON"
	inbox.Awaiting = model.AwaitApproval
	got := Runs([]Remote{remote(claude, true), remote(claude, false), corrupt, inbox, remote(Run{}, true)})
	if want := []Run{claude, {}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Runs = %+v, want %+v", got, want)
	}
}

// TestWhichCapsCountARun: each lease counts under the fleet's cap and
// the caps of the names it records; an anchor lease (none) only under the
// fleet's, an older fleetwatch lease (a host) under the fleet's and its
// host's.
func TestWhichCapsCountARun(t *testing.T) {
	l := limitsOf(t, "limits: {fleet: 10, host: 5, endpoint: {claude: 3}, provider: {anthropic: 4}, tier: {reasoner: 6}}\n")
	other := Run{Host: "lap", RunsAs: model.RunsAs{Tier: "reasoner", Endpoint: "local", Provider: "anthropic"}}
	anchor := Run{}
	older := Run{Host: "gpu"}
	runs := []Run{claude, claude, other, anchor, older}
	got := CapsOn(l, claude, runs)
	want := []CapCount{
		{Kind: FleetCap, Runs: 5, Max: 10},
		{Kind: config.CapHost, Name: "gpu", Runs: 3, Max: 5},
		{Kind: config.CapEndpoint, Name: "claude", Runs: 2, Max: 3},
		{Kind: config.CapProvider, Name: "anthropic", Runs: 3, Max: 4},
		{Kind: config.CapTier, Name: "reasoner", Runs: 3, Max: 6},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CapsOn =\n%+v\nwant\n%+v", got, want)
	}
	// A worker with no endpoint: only the fleet's, its host's and its
	// tier's caps bound it (no tier cap on mid here).
	plain := Run{Host: "lap", RunsAs: model.RunsAs{Tier: "mid"}}
	got = CapsOn(l, plain, runs)
	want = []CapCount{{Kind: FleetCap, Runs: 5, Max: 10}, {Kind: config.CapHost, Name: "lap", Runs: 1, Max: 5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CapsOn(no endpoint) = %+v, want %+v", got, want)
	}
	if got := CapsOn(config.Limits{}, claude, runs); got != nil {
		t.Errorf("no limits: caps %+v", got)
	}
}

func TestFullAndOver(t *testing.T) {
	c := CapCount{Kind: config.CapEndpoint, Name: "claude", Runs: 3, Max: 3}
	if !c.Full() || c.Over() {
		t.Errorf("3 of 3: full %v, over %v", c.Full(), c.Over())
	}
	c.Runs = 4
	if !c.Over() {
		t.Error("4 of 3 is not over")
	}
	if got := (CapCount{Kind: config.CapEndpoint, Name: "claude", Runs: 3, Max: 3}).String(); got != "limits: endpoint claude has 3 of 3 live runs" {
		t.Errorf("String %q", got)
	}
	if got := (CapCount{Kind: FleetCap, Runs: 12, Max: 12}).String(); got != "limits: the fleet has 12 of 12 live runs" {
		t.Errorf("String %q", got)
	}
	hostile := CapCount{Kind: config.CapHost, Name: "\x1b]0;owned\x07" + strings.Repeat("h", 200), Runs: 1, Max: 1}
	if s := hostile.String(); strings.ContainsAny(s, "\x1b\x07") || len([]rune(s)) > 120 {
		t.Errorf("a host name from another machine reaches the terminal as %q", s)
	}
}

// TestFullCapsForTheBoard: every cap that is full, each host's under
// `host: N`, none that has room.
func TestFullCapsForTheBoard(t *testing.T) {
	l := limitsOf(t, "limits: {fleet: 5, host: 2, endpoint: {claude: 3}, provider: {\"*\": 9}}\n")
	lap := Run{Host: "lap"}
	runs := []Run{claude, claude, lap, {}}
	if got := FullCaps(l, runs); !reflect.DeepEqual(got, []CapCount{{Kind: config.CapHost, Name: "gpu", Runs: 2, Max: 2}}) {
		t.Errorf("FullCaps = %+v", got)
	}
	runs = append(runs, claude)
	want := []CapCount{
		{Kind: FleetCap, Runs: 5, Max: 5},
		{Kind: config.CapHost, Name: "gpu", Runs: 3, Max: 2},
		{Kind: config.CapEndpoint, Name: "claude", Runs: 3, Max: 3},
	}
	if got := FullCaps(l, runs); !reflect.DeepEqual(got, want) {
		t.Errorf("FullCaps =\n%+v\nwant\n%+v", got, want)
	}
	if got := FullCaps(config.Limits{}, runs); got != nil {
		t.Errorf("no limits: %+v", got)
	}
}

// TestBoardRuns: a board's leases count when active, in in-progress/ and
// not inbox-held; a ready path's lease is a claim on its way.
func TestBoardRuns(t *testing.T) {
	now := 1000.0
	lease := func(rel string, expires float64) model.Lease {
		return model.Lease{AgentID: "a", Rel: rel, ExpiresAt: expires, Host: "gpu", RunsAs: claude.RunsAs}
	}
	inbox := lease("in-progress/c.md", 0)
	inbox.Awaiting = model.AwaitResume
	leases := []model.Lease{lease("in-progress/a.md", 2000), lease("in-progress/b.md", 900), lease("features/d.md", 2000), inbox}
	if got := BoardRuns(leases, now); !reflect.DeepEqual(got, []Run{claude}) {
		t.Errorf("BoardRuns = %+v", got)
	}
}

// TestLeaseRecordsWhatItRunsAs: the fields are written only when set, so
// a lease of a worker without them reads as anchor's; anchor's reads
// with none.
func TestLeaseRecordsWhatItRunsAs(t *testing.T) {
	l := model.Lease{Plan: "in-progress/a.md", AgentID: "a", ExpiresAt: 1, RunsAs: claude.RunsAs}
	text := string(model.EncodeLease(l))
	for _, want := range []string{`"tier": "reasoner"`, `"endpoint": "claude"`, `"provider": "anthropic"`} {
		if !strings.Contains(text, want) {
			t.Errorf("lease JSON has no %s:\n%s", want, text)
		}
	}
	if text := string(model.EncodeLease(model.Lease{AgentID: "a"})); strings.Contains(text, "tier") || strings.Contains(text, "provider") {
		t.Errorf("an empty RunsAs is written:\n%s", text)
	}
	back, err := model.DecodeLease([]byte(text))
	if err != nil || back.RunsAs != claude.RunsAs {
		t.Errorf("decoded %+v, %v", back.RunsAs, err)
	}
	anchor, err := model.DecodeLease([]byte(`{"plan": "in-progress/a.md", "agent_id": "x", "claimed_at": 1, "expires_at": 2}`))
	if err != nil || anchor.RunsAs != (model.RunsAs{}) || anchor.Host != "" {
		t.Errorf("anchor's lease: %+v, %v", anchor, err)
	}
}

// TestCapTiersAreModelTiers keeps config's list of tier names (it cannot
// import model) the tiers a lease records.
func TestCapTiersAreModelTiers(t *testing.T) {
	var words []string
	for _, tier := range model.Tiers {
		words = append(words, tier.String())
	}
	if !reflect.DeepEqual(words, config.CapTiers) {
		t.Errorf("config.CapTiers %v, model's tiers %v", config.CapTiers, words)
	}
}

// BenchmarkCaps counts 1,000 live runs on 10 hosts under every kind of
// cap, as a worker does twice per claim and a board once per load.
func BenchmarkCaps(b *testing.B) {
	l := config.Limits{Fleet: 2000, Each: map[string]int{config.CapHost: 200, config.CapProvider: 500},
		Named: map[string]map[string]int{config.CapEndpoint: {"claude": 300}, config.CapTier: {"frontier": 100}}}
	leases := make([]Remote, 1000)
	for i := range leases {
		r := Run{Host: "host-" + strconv.Itoa(i%10), RunsAs: model.RunsAs{Tier: model.Tiers[i%4].String(), Endpoint: "ep-" + strconv.Itoa(i%7), Provider: "p-" + strconv.Itoa(i%3)}}
		leases[i] = remote(r, i%5 != 0)
	}
	b.ResetTimer()
	for range b.N {
		runs := Runs(leases)
		CapsOn(l, claude, runs)
		FullCaps(l, runs)
	}
}
