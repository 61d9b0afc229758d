package model

import (
	"slices"
	"testing"
)

func noticePlan(rel string) BoardRow {
	r := Rel(rel)
	p := &Plan{Rel: rel, Lane: r.Lane(), Name: rel[len(r.Lane())+1:], Slug: r.Slug()}
	p.Header.Title = "Title of " + p.Slug
	return BoardRow{Plan: p}
}

func code(n int) *int { return &n }

// baseFacts: a plan in review, a live worker holding a live lease, a
// worker that exited cleanly.
func baseFacts() NoticeFacts {
	return NoticeFacts{
		Now:    1000,
		Rows:   []BoardRow{noticePlan("features/a.md"), noticePlan("review-needed/done.md")},
		Leases: []Lease{{File: "in-progress__b.md.json", Rel: "in-progress/b.md", AgentID: "mid-1", ExpiresAt: 2000}},
		Workers: []WorkerFact{
			{Agent: "mid-1", Plan: "in-progress/b.md", Health: "live", Started: 900, Heartbeat: 990},
			{Agent: "small-1", Health: "exited", Exit: code(0), Started: 100},
		},
	}
}

func kindsKeys(ns []Notice) []string {
	var out []string
	for _, n := range ns {
		out = append(out, string(n.Kind)+" "+n.Key)
	}
	return out
}

func TestNewNoticesEachKind(t *testing.T) {
	cases := []struct {
		name   string
		change func(f *NoticeFacts)
		want   []string
		text   string
	}{
		{"nothing changed", func(*NoticeFacts) {}, nil, ""},
		{"a plan reaches review-needed", func(f *NoticeFacts) {
			f.Rows[0] = noticePlan("review-needed/a.md")
		}, []string{"review review-needed/a.md"}, "a waits for review: Title of a"},
		{"a worker exits non-zero", func(f *NoticeFacts) {
			f.Workers[0].Health, f.Workers[0].Exit = "exited", code(3)
		}, []string{"failed mid-1"}, "mid-1 exited 3 on in-progress/b.md"},
		{"a worker exits non-zero saying why", func(f *NoticeFacts) {
			f.Workers[0].Health, f.Workers[0].Exit = "exited", code(1)
			f.Workers[0].Note = "agent exited 0 but made no commit: 1 file changed, not committed; parked in blocked/"
		}, []string{"failed mid-1"}, "mid-1 exited 1 on in-progress/b.md: agent exited 0 but made no commit: 1 file changed, not committed; parked in blocked/"},
		{"a worker exits zero", func(f *NoticeFacts) {
			f.Workers[0].Health, f.Workers[0].Exit = "exited", code(0)
		}, nil, ""},
		{"a worker goes stale", func(f *NoticeFacts) {
			f.Workers[0].Health = "stale"
		}, []string{"stale mid-1"}, "mid-1 stopped heartbeating on in-progress/b.md"},
		{"a worker's process dies", func(f *NoticeFacts) {
			f.Workers[0].Health = "dead"
		}, []string{"dead mid-1"}, "mid-1's process is gone on in-progress/b.md"},
		{"a lease expires while its worker is live", func(f *NoticeFacts) {
			f.Now = 2500
		}, nil, ""},
		{"a lease expires with its worker gone", func(f *NoticeFacts) {
			f.Now, f.Workers = 2500, f.Workers[1:]
		}, []string{"expired in-progress__b.md.json"}, "in-progress/b.md: mid-1's lease expired and no worker drives it"},
		{"a lease expires while its worker is stale", func(f *NoticeFacts) {
			f.Now, f.Workers[0].Health = 2500, "stale"
		}, []string{"expired in-progress__b.md.json", "stale mid-1"}, ""},
		{"a proposal waits for approval", func(f *NoticeFacts) {
			f.Proposals = []ProposalFact{{Slug: "b", Rel: "in-progress/b.md", Agent: "mid-1", N: 1}}
		}, []string{"proposal in-progress/b.md"}, "b: mid-1's plan waits for approval"},
		{"a build leaves its scope", func(f *NoticeFacts) {
			f.Workers[0].Violations = []string{".plans/x.md", "a.go", "b.go", "c.go"}
		}, []string{"scope mid-1"}, "mid-1 touched 4 paths out of scope on in-progress/b.md: .plans/x.md, a.go, b.go and 1 more"},
		{"an exited worker's violations are no news", func(f *NoticeFacts) {
			f.Workers[1].Violations = []string{"a.go"}
		}, nil, ""},
		{"two workers touch the same file, and it conflicts", func(f *NoticeFacts) {
			f.Overlaps = []OverlapFact{{A: "mid-1", B: "mid-2", Paths: []string{"a.go"}, Checked: true, Conflict: true}}
		}, []string{"overlap mid-1"}, "mid-1 and mid-2 both touch a.go: their changes conflict"},
		{"two workers touch the same file, and it merges", func(f *NoticeFacts) {
			f.Overlaps = []OverlapFact{{A: "mid-1", B: "mid-2", Paths: []string{"a.go", "b.go"}, Checked: true}}
		}, []string{"overlap mid-1"}, "mid-1 and mid-2 both touch a.go, b.go: their changes merge cleanly"},
		{"an unreadable lease is not an expiry", func(f *NoticeFacts) {
			f.Now, f.Workers = 2500, f.Workers[1:]
			f.Leases[0].Corrupt = "not JSON"
		}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prev := Conditions(baseFacts())
			f := baseFacts()
			c.change(&f)
			got := NewNotices(prev, Conditions(f))
			if !slices.Equal(kindsKeys(got), c.want) {
				t.Fatalf("new notices %q, want %q", kindsKeys(got), c.want)
			}
			if c.text != "" && got[0].Text != c.text {
				t.Errorf("text %q, want %q", got[0].Text, c.text)
			}
			for _, n := range got {
				if n.At != f.Now {
					t.Errorf("%s noticed at %v, want the look's time %v", n.ID, n.At, f.Now)
				}
			}
		})
	}
}

func TestNoticeSubjects(t *testing.T) {
	f := baseFacts()
	f.Now, f.Workers = 2500, []WorkerFact{{Agent: "x", Health: "dead", Started: 5}}
	want := map[NoticeKind]NoticeSubject{NoticeReview: SubjectPlan, NoticeLeaseExpired: SubjectLease, NoticeWorkerDead: SubjectWorker}
	got := Conditions(f)
	if len(got) != len(want) {
		t.Fatalf("conditions %q, want one of each of %v", kindsKeys(got), want)
	}
	for _, n := range got {
		if n.Subject != want[n.Kind] {
			t.Errorf("%s leads to subject %d, want %d", n.ID, n.Subject, want[n.Kind])
		}
	}
}

// TestNoticesNotTwice: a fact that stays true is noticed once, however
// many looks follow; one true at the first look (the baseline) never is.
func TestNoticesNotTwice(t *testing.T) {
	f := baseFacts()
	baseline := Conditions(f)
	if len(baseline) != 1 || baseline[0].Kind != NoticeReview {
		t.Fatalf("baseline %q, want the plan already in review", kindsKeys(baseline))
	}
	prev := baseline
	f.Workers[0].Health = "stale"
	seen := map[string]int{}
	for look := range 5 {
		f.Now += 10 // the clock moves; the facts stay
		cur := Conditions(f)
		for _, n := range NewNotices(prev, cur) {
			seen[n.ID]++
			if look > 0 {
				t.Errorf("look %d noticed %s again", look, n.ID)
			}
		}
		prev = cur
	}
	if len(seen) != 1 {
		t.Fatalf("noticed %v, want only the stale worker", seen)
	}
	for id := range seen {
		if id == baseline[0].ID {
			t.Fatalf("the plan in review at the first look was noticed")
		}
	}
}

// TestNoticeIDsTellRunsApart: the same agent failing again in a new run,
// a lease renewed and expiring again, a worker stale a second time are new
// facts.
func TestNoticeIDsTellRunsApart(t *testing.T) {
	f := NoticeFacts{Now: 5000, Workers: []WorkerFact{{Agent: "a", Health: "exited", Exit: code(1), Started: 100}}}
	g := f
	g.Workers = []WorkerFact{{Agent: "a", Health: "exited", Exit: code(1), Started: 200}}
	if n := NewNotices(Conditions(f), Conditions(g)); len(n) != 1 {
		t.Errorf("a second failed run: %q, want one notice", kindsKeys(n))
	}
	f.Workers = []WorkerFact{{Agent: "a", Health: "stale", Started: 100, Heartbeat: 150}}
	g.Workers = []WorkerFact{{Agent: "a", Health: "stale", Started: 100, Heartbeat: 400}}
	if n := NewNotices(Conditions(f), Conditions(g)); len(n) != 1 {
		t.Errorf("stale again after a heartbeat: %q, want one notice", kindsKeys(n))
	}
	f.Workers, g.Workers = nil, nil
	f.Leases = []Lease{{File: "in-progress__b.md.json", Rel: "in-progress/b.md", AgentID: "m", ExpiresAt: 4000}}
	g.Leases = []Lease{{File: "in-progress__b.md.json", Rel: "in-progress/b.md", AgentID: "m", ExpiresAt: 4500}}
	if n := NewNotices(Conditions(f), Conditions(g)); len(n) != 1 {
		t.Errorf("a renewed lease expiring again: %q, want one notice", kindsKeys(n))
	}
}

// A proposal, a violation and an overlap are each noticed once per fact:
// the same facts again are no news; a second proposal, a new path out of
// scope, or an overlap turning into a conflict are.
func TestCoordinatorNoticesOncePerFact(t *testing.T) {
	f := baseFacts()
	f.Proposals = []ProposalFact{{Slug: "b", Rel: "in-progress/b.md", Agent: "mid-1", N: 1}}
	f.Workers[0].Violations = []string{"a.go"}
	f.Overlaps = []OverlapFact{{A: "mid-1", B: "mid-2", Paths: []string{"a.go"}, Checked: true}}
	prev := Conditions(f)
	if got := NewNotices(prev, Conditions(f)); len(got) != 0 {
		t.Fatalf("the same facts again: %q", kindsKeys(got))
	}
	g := f
	g.Proposals = []ProposalFact{{Slug: "b", Rel: "in-progress/b.md", Agent: "mid-1", N: 2}}
	g.Workers = slices.Clone(f.Workers)
	g.Workers[0].Violations = []string{"a.go", "b.go"}
	g.Overlaps = []OverlapFact{{A: "mid-1", B: "mid-2", Paths: []string{"a.go"}, Checked: true, Conflict: true}}
	got := NewNotices(prev, Conditions(g))
	if want := []string{"proposal in-progress/b.md", "scope mid-1", "overlap mid-1"}; !slices.Equal(kindsKeys(got), want) {
		t.Fatalf("new notices %q, want %q (in this order)", kindsKeys(got), want)
	}
	for _, n := range got {
		if want := map[NoticeKind]NoticeSubject{NoticeProposal: SubjectPlan, NoticeScopeViolation: SubjectWorker, NoticeOverlap: SubjectWorker}[n.Kind]; n.Subject != want {
			t.Errorf("%s: subject %v, want %v", n.Kind, n.Subject, want)
		}
	}
}

// The merge queue's own notices (a move of the integration branch the
// queue did not make) are notices too, each once, leading to the queue.
func TestGateNotices(t *testing.T) {
	line := "the integration branch dev moved outside the queue: 1a2b3c → 4d5e6f"
	got := Conditions(NoticeFacts{Gate: []string{line}, Now: 10})
	if len(got) != 1 || got[0].Kind != NoticeGate || got[0].Text != line || got[0].Subject != SubjectGate {
		t.Fatalf("notices %+v", got)
	}
	if again := NewNotices(got, Conditions(NoticeFacts{Gate: []string{line}, Now: 20})); len(again) != 0 {
		t.Errorf("the same gate notice twice: %+v", again)
	}
}

// The whole fleet's notices: a run paused at its budget, a landing the
// lander refused (a day at most), a claimed plan with no commit for
// StuckAfter.
func TestFleetNotices(t *testing.T) {
	cases := []struct {
		name   string
		change func(f *NoticeFacts)
		want   []string
		text   string
	}{
		{"a run paused at its budget", func(f *NoticeFacts) {
			f.Workers[0].Paused, f.Workers[0].PausedAt = "budget reached: the run's budget ($5) spent: $5.10", 995
		}, []string{"budget mid-1"}, "mid-1 is paused on in-progress/b.md: budget reached: the run's budget ($5) spent: $5.10"},
		{"a run asks a question", func(f *NoticeFacts) {
			f.Workers[0].Asking, f.Workers[0].AskID, f.Workers[0].AskedAt = "may I run make deploy?", "ask-7", 995
		}, []string{"asking mid-1"}, "mid-1 waits for input on in-progress/b.md: may I run make deploy?; fleetwatch answer mid-1 …"},
		{"an exited run's question is not news", func(f *NoticeFacts) {
			f.Workers[1].Asking, f.Workers[1].AskID = "left over?", "ask-1"
		}, nil, ""},
		{"a run the operator paused is not a budget", func(f *NoticeFacts) {
			f.Workers[0].Paused, f.Workers[0].PausedAt = "paused by operator-ann", 995
		}, nil, ""},
		{"a landing refused", func(f *NoticeFacts) {
			f.Landings = []LandingFact{{Slug: "done", Commit: "0123456789abcdef", Reason: "checks failed: test", At: 990}}
		}, []string{"landing "}, "landing done @ 0123456 did not land: checks failed: test"},
		{"a landing refused two days ago is not news", func(f *NoticeFacts) {
			f.Landings = []LandingFact{{Slug: "done", Reason: "x", At: 1000 - 2*86400}}
		}, nil, ""},
		{"a claimed plan with no commit for StuckAfter", func(f *NoticeFacts) {
			f.StuckAfter = 600
			f.Leases[0].ClaimedAt = 100
			f.Commits = map[string]float64{"feature/b": 300, "feature/a": 990}
		}, []string{"stuck in-progress/b.md"}, "in-progress/b.md: no commit from mid-1 for 11m"},
		{"a recent commit is progress", func(f *NoticeFacts) {
			f.StuckAfter = 600
			f.Leases[0].ClaimedAt = 100
			f.Commits = map[string]float64{"feature/b": 500}
		}, nil, ""},
		{"a recent claim is progress", func(f *NoticeFacts) {
			f.StuckAfter = 600
			f.Leases[0].ClaimedAt = 500
		}, nil, ""},
		{"a plan the inbox holds waits for a person, not its agent", func(f *NoticeFacts) {
			f.StuckAfter = 600
			f.Leases[0].Awaiting = AwaitApproval
		}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prev := Conditions(baseFacts())
			f := baseFacts()
			c.change(&f)
			got := NewNotices(prev, Conditions(f))
			if !slices.Equal(kindsKeys(got), c.want) {
				t.Fatalf("got %v, want %v", kindsKeys(got), c.want)
			}
			if len(got) > 0 && got[0].Text != c.text {
				t.Errorf("text %q, want %q", got[0].Text, c.text)
			}
		})
	}
	// A commit, then another silence: a new notice, not the same one.
	f := baseFacts()
	f.StuckAfter, f.Leases[0].ClaimedAt = 600, 100
	first := Conditions(f)
	f.Commits = map[string]float64{"feature/b": 200}
	f.Now = 1200
	if fresh := NewNotices(first, Conditions(f)); len(fresh) != 1 || fresh[0].Kind != NoticeStuck {
		t.Errorf("a second silence: %v", kindsKeys(fresh))
	}
}

// A run waiting for input is noticed once per question: the same one on
// the next look is not news, the next question is.
func TestAskingNoticedOncePerQuestion(t *testing.T) {
	f := baseFacts()
	f.Workers[0].Asking, f.Workers[0].AskID, f.Workers[0].AskedAt = "use postgres 16?", "q1", 950
	first := Conditions(f)
	f.Now = 1900
	f.Workers[0].Heartbeat = 1890
	if again := NewNotices(first, Conditions(f)); len(again) != 0 {
		t.Fatalf("the same question noticed again: %+v", again)
	}
	f.Workers[0].Asking, f.Workers[0].AskID = "and redis?", "q2"
	next := NewNotices(first, Conditions(f))
	if len(next) != 1 || next[0].Kind != NoticeAsking || next[0].ID != "asking:mid-1@900@q2" || next[0].Key != "mid-1" {
		t.Fatalf("the next question: %+v", next)
	}
	f.Workers[0].Asking, f.Workers[0].AskID = "", ""
	if gone := Conditions(f); slices.ContainsFunc(gone, func(n Notice) bool { return n.Kind == NoticeAsking }) {
		t.Errorf("an answered question is still a notice: %+v", gone)
	}
}

// An endpoint disabled or shut is noticed once per spell of trouble.
func TestEndpointNotices(t *testing.T) {
	f := NoticeFacts{Now: 1000, Endpoints: []EndpointFact{
		{Name: "cc", State: "shut", Reason: "usage limit reached", Since: 900, Until: 1000 + 3*3600},
		{Name: "gem", State: "disabled", Reason: "401 invalid key", Since: 950},
	}}
	got := Conditions(f)
	if len(got) != 2 || got[0].Kind != NoticeEndpoint || got[0].Text != "endpoint cc is shut for 3h0m: usage limit reached; other endpoints take its plans" ||
		got[1].Text != "endpoint gem is disabled: 401 invalid key; once fixed: fleetwatch endpoints clear gem" {
		t.Fatalf("%+v", got)
	}
	f.Now = 2000
	if again := NewNotices(got, Conditions(f)); len(again) != 0 {
		t.Errorf("the same spell noticed again: %+v", again)
	}
	f.Endpoints[0].Since = 1900
	if again := NewNotices(got, Conditions(f)); len(again) != 1 || again[0].ID != "endpoint:cc@shut@1900" {
		t.Errorf("a new spell: %+v", again)
	}
}
