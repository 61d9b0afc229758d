package model

import (
	"strings"
	"testing"
)

// preferred reads a Preferred models value the way the header parser does.
func preferred(v string) []string {
	if v == "" {
		return nil
	}
	return ParseHeader("- **Preferred models:** " + v + "\n").Preferred
}

func TestClassifyFit(t *testing.T) {
	tests := []struct {
		name      string
		model     string
		tier      Tier
		preferred string
		want      Fit
	}{
		{"TESTS 28", "fable", Frontier, "small, mid", FitOverqualified},
		{"TESTS 29", "haiku", Small, "reasoner, frontier", FitUnderqualified},
		{"TESTS 30", "sonnet", Mid, "mid, reasoner", FitGood},
		{"TESTS 31 name match", "Grok 4.5", Mid, "Grok 4.5, Qwen3 32B", FitGood},
		{"TESTS 32 no Preferred", "unknown", Mid, "", FitUnknown},
		{"TESTS 33 names do not raise the floor", "Qwen3 32B", Mid, "mid, Claude Sonnet 5, Grok 4.5", FitGood},
		{"TESTS 34", "Qwen3 32B", Small, "Claude Sonnet 5, Grok 4.5", FitUnknown},
		{"TESTS 35", "Qwen3 32B", Mid, "Claude Sonnet 5, Grok 4.5", FitUnknown},
		{"TESTS 36", "tiny", Small, "", FitUnknown},
		{"gap: small, reasoner for mid", "", Mid, "small, reasoner", FitUnknown},
		{"gap: mid, frontier for reasoner", "", Reasoner, "mid, frontier", FitUnknown},
		{"single tier equal", "", Reasoner, "reasoner", FitGood},
		{"single tier above", "", Frontier, "reasoner", FitOverqualified},
		{"single tier below", "", Small, "mid", FitUnderqualified},
		{"tier case from header", "", Mid, "MID", FitGood},
		{"name overrides tiers", "Claude Sonnet 5", Small, "frontier, claude sonnet 5", FitGood},
		{"name word subset of model", "Qwen/Qwen3-32B-FP8", Mid, "qwen3 32b", FitGood},
		{"name with separators", "qwen3-32b", Small, "Qwen3_32B", FitGood},
		{"name words must all be in model", "Qwen3 8B", Mid, "qwen3 32b", FitUnknown},
		{"model words need not all be in name", "claude-sonnet-5-20260101", Frontier, "claude sonnet 5, small", FitGood},
		{"no substring match: short model", "a", Mid, "Claude Sonnet 5", FitUnknown},
		{"no substring match: short name", "Claude Sonnet 5", Mid, "a", FitUnknown},
		{"no substring match: partial word", "sonnet", Mid, "Claude Sonnet 5", FitUnknown},
		{"no substring match: long word inside", "Claude Sonnet 5", Mid, "sonn", FitUnknown},
		{"no substring match: anchor's 4-letter rule", "qwen3", Mid, "qwen3-coder", FitUnknown},
		{"empty model never matches", "", Mid, "claude sonnet 5", FitUnknown},
		{"empty model, tier still counts", "", Mid, "claude sonnet 5, reasoner", FitUnderqualified},
		{"mid-class is a name, not a tier", "", Mid, "mid-class", FitUnknown},
		{"registry words are names in Preferred", "", Mid, "executor", FitUnknown},
		{"no worker tier", "", NoTier, "mid", FitUnknown},
	}
	for _, tt := range tests {
		w := Worker{AgentID: "worker-1", Tier: tt.tier, Model: tt.model}
		if got := ClassifyFit(preferred(tt.preferred), w); got != tt.want {
			t.Errorf("%s: ClassifyFit(%q, %q/%v) = %s, want %s", tt.name, tt.preferred, tt.model, tt.tier, got, tt.want)
		}
	}
}

// The agent id is never a model name, even when it would match.
func TestClassifyFitIgnoresAgentID(t *testing.T) {
	w := Worker{AgentID: "claude sonnet 5", Tier: Mid}
	if got := ClassifyFit([]string{"claude sonnet 5"}, w); got != FitUnknown {
		t.Errorf("agent id used as model: %s", got)
	}
	w = Worker{AgentID: "a", Tier: Mid}
	if got := ClassifyFit([]string{"claude sonnet 5"}, w); got != FitUnknown {
		t.Errorf("agent id `a` matched: %s", got)
	}
}

func TestFitEligible(t *testing.T) {
	for f, want := range map[Fit]bool{FitGood: true, FitUnknown: true, FitOverqualified: false, FitUnderqualified: false} {
		if f.Eligible() != want {
			t.Errorf("%s.Eligible() = %v", f, !want)
		}
	}
}

func TestParseTier(t *testing.T) {
	tests := []struct {
		in   string
		want Tier
	}{
		{"small", Small},
		{"mid", Mid},
		{"reasoner", Reasoner},
		{"frontier", Frontier},
		{"swarm", Small},
		{"executor", Mid},
		{"executor-heavy", Mid}, // TESTS 16
		{"detached", Mid},
		{"  MID ", Mid},
		{"Frontier", Frontier},
		{"\tSwarm\n", Small},
		{"EXECUTOR-HEAVY", Mid},
	}
	for _, tt := range tests {
		got, err := ParseTier(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseTier(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", " ", "medium", "mdi", "executor heavy", "large", "small,mid", "none"} {
		got, err := ParseTier(bad)
		if err == nil || got != NoTier {
			t.Errorf("ParseTier(%q) = %v, %v; want an error", bad, got, err)
		} else if !strings.Contains(err.Error(), "unknown tier") {
			t.Errorf("ParseTier(%q) error %q", bad, err)
		}
	}
}

func TestTierString(t *testing.T) {
	for _, tt := range Tiers {
		got, err := ParseTier(tt.String())
		if err != nil || got != tt {
			t.Errorf("ParseTier(%v.String()) = %v, %v", tt, got, err)
		}
	}
	if NoTier.String() != "" {
		t.Errorf("NoTier.String() = %q", NoTier.String())
	}
	for i := 1; i < len(Tiers); i++ {
		if Tiers[i-1] >= Tiers[i] {
			t.Errorf("tiers out of order: %v", Tiers)
		}
	}
}

func TestContextProblem(t *testing.T) {
	p := &Plan{Size: 40_001}
	if why := ContextProblem(p, "small-local", 8000); why != "about 10001 tokens of plan text, over small-local's max_context of 8000" {
		t.Errorf("%q", why)
	}
	if why := ContextProblem(p, "big", 16000); why != "" {
		t.Errorf("fits: %q", why)
	}
	if why := ContextProblem(p, "none", 0); why != "" {
		t.Errorf("no limit: %q", why)
	}
}
