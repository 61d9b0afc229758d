package notify

import (
	"reflect"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
)

// defaultSettingsEvery is how often a started notifier reads its settings
// again: a small file parsed every two seconds costs nothing, and sees an
// editor's write-and-rename that a watch on the file itself would lose.
const defaultSettingsEvery = 2 * time.Second

// followSettings reads the settings every SettingsEvery until Close, and
// swaps the targets when they changed. A file that does not parse keeps
// the targets there are, said once per distinct error.
func (n *Notifier) followSettings() {
	defer n.looking.Done()
	every := n.opt.SettingsEvery
	if every <= 0 {
		every = defaultSettingsEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	said := ""
	for {
		select {
		case <-n.stop:
			return
		case <-tick.C:
		}
		c, err := n.opt.Settings()
		if err != nil {
			if err.Error() != said {
				said = err.Error()
				n.say("settings not reread, the targets stay as they were: %v", err)
			}
			continue
		}
		said = ""
		n.retarget(c)
	}
}

// retarget makes c's targets the notifier's when they differ from the
// ones it has: the new ones start, the old ones send what they hold and
// stop. What a face offers from then on goes to the new ones.
func (n *Notifier) retarget(c config.Notify) {
	n.mu.RLock()
	same := reflect.DeepEqual(n.conf, c)
	n.mu.RUnlock()
	if same {
		return
	}
	ts := n.targetsOf(c)
	qs := n.startAll(ts)
	n.mu.Lock()
	old := n.queues
	n.targets, n.queues, n.conf = ts, qs, c
	n.mu.Unlock()
	// No Offer holds the old queues now: it took the read lock after the swap.
	for _, q := range old {
		close(q)
	}
	n.say("settings changed: sending to %v", n.Targets())
}

// stillTrue drops from pending what Options.Current no longer holds true:
// a notice waits for its target's rate, a restart or a retry, and the fact
// it tells of may be gone by then. When Current cannot say (an error),
// everything stays.
func (n *Notifier) stillTrue(pending []model.Notice) []model.Notice {
	if n.opt.Current == nil || len(pending) == 0 {
		return pending
	}
	n.curMu.Lock()
	cur, err := n.opt.Current()
	n.curMu.Unlock()
	if err != nil {
		return pending
	}
	now := make(map[string]bool, len(cur))
	for _, x := range cur {
		now[x.ID] = true
	}
	kept := pending[:0:0]
	for _, p := range pending {
		if now[p.ID] {
			kept = append(kept, p)
		}
	}
	return kept
}
