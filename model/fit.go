package model

import (
	"fmt"
	"strings"
)

// Fit is how well a worker matches a plan's Preferred models.
type Fit string

const (
	FitGood           Fit = "good"
	FitUnknown        Fit = "unknown"
	FitOverqualified  Fit = "overqualified"
	FitUnderqualified Fit = "underqualified"
)

// Eligible reports whether a bare pick may take a plan of this fit.
func (f Fit) Eligible() bool { return f == FitGood || f == FitUnknown }

// Worker is who is asking: its agent id, fit tier and model name.
type Worker struct {
	AgentID string
	Tier    Tier
	// Model is the model's name for matching Preferred names; never the agent id.
	Model string
}

// ClassifyFit rates a worker against a plan's Preferred tokens (already
// lower-cased). A name matches when all its words are among the model's words.
func ClassifyFit(preferred []string, w Worker) Fit {
	if len(preferred) == 0 {
		return FitUnknown
	}
	if prefers(preferred, w) {
		return FitGood
	}
	lo, hi := tierRange(preferred)
	switch {
	case hi == NoTier || w.Tier == NoTier:
		return FitUnknown
	case w.Tier > hi:
		return FitOverqualified
	case w.Tier < lo:
		return FitUnderqualified
	}
	return FitUnknown
}

// prefers reports whether a preferred token names w: its tier, or a name
// whose words are all among its model's.
func prefers(preferred []string, w Worker) bool {
	modelWords := nameWords(w.Model)
	for _, tok := range preferred {
		if t := tierWord(tok); t != NoTier {
			if t == w.Tier {
				return true
			}
			continue
		}
		if len(modelWords) > 0 && wordsSubset(nameWords(tok), modelWords) {
			return true
		}
	}
	return false
}

// tierRange is the lowest and highest tier preferred names; NoTier for
// both when it names none.
func tierRange(preferred []string) (lo, hi Tier) {
	for _, tok := range preferred {
		t := tierWord(tok)
		if t == NoTier {
			continue
		}
		if lo == NoTier || t < lo {
			lo = t
		}
		if t > hi {
			hi = t
		}
	}
	return lo, hi
}

func nameWords(s string) []string {
	s = strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '/' {
			return ' '
		}
		return r
	}, strings.ToLower(s))
	return strings.Fields(s)
}

func wordsSubset(sub, of []string) bool {
	if len(sub) == 0 {
		return false
	}
	for _, s := range sub {
		found := false
		for _, o := range of {
			if s == o {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// BytesPerToken is how ContextProblem guesses a plan's tokens from its
// size: about four bytes a token for English text and code, as tokenizers
// of the day run; a guess errs toward fitting.
const BytesPerToken = 4

// ContextProblem says why p cannot be given to an endpoint whose model
// takes at most maxContext tokens in one prompt, "" when it fits (or there
// is no limit): anchor's dispatch refuses such a prompt (failed-budget),
// so a worker never claims it.
func ContextProblem(p *Plan, endpoint string, maxContext int64) string {
	if maxContext <= 0 {
		return ""
	}
	tokens := (p.Size + BytesPerToken - 1) / BytesPerToken
	if tokens <= maxContext {
		return ""
	}
	return fmt.Sprintf("about %d tokens of plan text, over %s's max_context of %d", tokens, endpoint, maxContext)
}
