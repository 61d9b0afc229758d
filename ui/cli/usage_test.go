package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"fleetwatch/workers/ledger"
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
