package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/ledger"
)

func TestUsageSumsTheLedger(t *testing.T) {
	dir := t.TempDir()
	end := time.Now().Add(-time.Hour)
	for i, r := range []ledger.Run{
		{Plan: "export", Tier: "mid", Model: "qwen", Input: 1_500_000, Output: 20_000, CostUSD: 0.40, Priced: true, Source: ledger.Metered},
		{Plan: "export", Tier: "frontier", Model: "opus", Input: 300_000, Output: 9_000, CostUSD: 2.25, Priced: true, Source: ledger.Reported},
		{Plan: "search", Tier: "mid", Model: "local", Input: 42_000, Output: 1_000, Source: ledger.Metered},
	} {
		r.ID, r.Agent, r.Start, r.End = string(rune('a'+i)), "w", end.Add(-time.Minute), end
		if err := ledger.Append(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Main(append([]string{"usage", "--root", dir}, args...), &out, &errb)
		return out.String(), errb.String(), code
	}
	out, errText, code := run()
	if code != 0 || errText != "" {
		t.Fatalf("%d %q", code, errText)
	}
	for _, want := range []string{"PLAN", "export", "$2.65", "1.8M", "search", "no price", "total", "1 runs have no price", "1 runs are as their agent reported them"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Index(out, "export") > strings.Index(out, "search") {
		t.Errorf("the costliest is not first:\n%s", out)
	}
	out, _, _ = run("--by", "tier", "--json")
	var got usageJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.By != "tier" || len(got.Groups) != 2 || got.Groups[0].Key != "frontier" {
		t.Errorf("--json by tier: %v %+v", err, got)
	}
	out, _, _ = run("--since", time.Now().Format(time.DateOnly), "--by", "day", "--json")
	if !strings.Contains(out, `"runs":3`) && end.Day() == time.Now().Day() {
		t.Errorf("--since today: %s", out)
	}
	if _, errText, code := run("--since", "last tuesday"); code != 2 || !strings.Contains(errText, "--since") {
		t.Errorf("a bad --since: %d %q", code, errText)
	}
}

func TestBudgetShowAndExtend(t *testing.T) {
	dir := t.TempDir()
	for _, lane := range []string{"features", "in-progress"} {
		os.MkdirAll(filepath.Join(dir, ".plans", lane), 0o755)
	}
	os.WriteFile(filepath.Join(dir, ".plans", "in-progress", "export.md"), []byte("# Export\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("budgets:\n  plan: {tokens: 1M}\n  endpoint_day: {claude: {usd: 10}}\n"), 0o644)
	ledger.Append(dir, ledger.Run{ID: "r1", Plan: "export", Endpoint: "claude", Input: 900_000, CostUSD: 4, Priced: true, End: time.Now()})
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Main(append(args, "--root", dir), &out, &errb)
		return out.String(), errb.String(), code
	}
	out, errText, code := run("budget", "show")
	if code != 0 || !strings.Contains(out, "endpoint claude today") || !strings.Contains(out, " 40 %") || !strings.Contains(out, "plan export") || !strings.Contains(out, " 90 %") {
		t.Errorf("show: %d %q\n%s", code, errText, out)
	}
	if out, errText, code = run("budget", "extend", "export", "--by", "1M, $5"); code != 0 || out != "export: budget extended by 1M tokens, $5\n" {
		t.Errorf("extend: %d %q %q", code, out, errText)
	}
	if l, _ := ledger.Extended(dir, "export"); l.Tokens != 1_000_000 || l.USD != 5 {
		t.Errorf("recorded %+v", l)
	}
	if _, errText, code = run("budget", "extend", "exprot", "--by", "1M"); code != 2 || !strings.Contains(errText, `no plan "exprot"`) {
		t.Errorf("a typo: %d %q", code, errText)
	}
	if _, errText, code = run("budget", "extend", "export", "--by", "lots"); code != 2 || !strings.Contains(errText, "--by") {
		t.Errorf("a bad --by: %d %q", code, errText)
	}
}

func TestReportJoinsRunsAndOutcomes(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".plans", "logs"), 0o755)
	os.MkdirAll(filepath.Join(dir, ".plans", "features"), 0o755)
	start := time.Now().Add(-2 * time.Hour)
	ts := func(d time.Duration) string { return start.Add(d).UTC().Format(time.RFC3339Nano) }
	events := `{"ts":"` + ts(30*time.Minute) + `","event":"checks","slug":"export","reason":"fail: test"}
{"ts":"` + ts(90*time.Minute) + `","event":"land","slug":"export"}
`
	os.WriteFile(filepath.Join(dir, ".plans", "logs", "events.jsonl"), []byte(events), 0o644)
	ledger.Append(dir, ledger.Run{ID: "r1", Plan: "export", Tier: "mid", Input: 1000, CostUSD: 2, Start: start, End: start.Add(20 * time.Minute), Claim: ledger.ClaimSuccess})
	var out, errb bytes.Buffer
	if code := Main([]string{"report", "--root", dir}, &out, &errb); code != 0 {
		t.Fatalf("%d %s", code, errb.String())
	}
	for _, want := range []string{"TIER", "mid", "$2.00", "0 % of 1", "1h30m", "SAID DONE, FAILED"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
	out.Reset()
	Main([]string{"report", "--root", dir, "--json", "--by", "model"}, &out, &errb)
	var got reportJSON
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Lines) != 1 || got.Lines[0].SaidDoneFailed != 1 || got.Lines[0].Landed != 1 {
		t.Errorf("%v %s", err, out.String())
	}
}

// An agent (FLEET_AGENT_ID set by its driver) never raises its own budget.
func TestBudgetExtendRefusesAnAgent(t *testing.T) {
	t.Setenv("FLEET_AGENT_ID", "w-mid-1")
	var out, errb bytes.Buffer
	code := Main([]string{"budget", "extend", "export", "--by", "1M", "--root", t.TempDir()}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "a person extends a budget, not an agent (FLEET_AGENT_ID=w-mid-1)") {
		t.Errorf("%d %q", code, errb.String())
	}
}
