package notify

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/fleetwatch/fleetwatch/model"
)

// Result is how one target took notify test's notice.
type Result struct {
	Target string
	// Err is why it was not sent; nil when it was.
	Err   error
	Tries int
}

// ErrNoTarget is Test's answer for a --to no target is called.
var ErrNoTarget = errors.New("no such target")

// Test sends one test notice to each target, or to the one named to, now
// (through the record, so it counts against the rate, but past it): what
// happened to each, in order.
func (n *Notifier) Test(to string) ([]Result, error) {
	var out []Result
	now := n.opt.Now()
	x := model.Notice{ID: "test:" + n.opt.Host + "@" + strconv.FormatInt(now.UnixNano(), 10), At: float64(now.Unix()), Kind: "test",
		Text: "a test notice from fleetwatch notify test on " + n.opt.Host + ": notices of " + n.opt.Project + " reach here"}
	n.mu.RLock()
	targets := n.targets
	n.mu.RUnlock()
	for _, t := range targets {
		if to != "" && t.name != to {
			continue
		}
		out = append(out, n.testOne(t, x))
	}
	if len(out) == 0 {
		if to == "" {
			return nil, fmt.Errorf("%w: no notify: targets are set", ErrNoTarget)
		}
		return nil, fmt.Errorf("%w %q (targets: %v)", ErrNoTarget, to, n.Targets())
	}
	return out, nil
}

func (n *Notifier) testOne(t *target, x model.Notice) Result {
	if why := t.absent(); why != "" {
		return Result{Target: t.name, Err: errors.New(why)}
	}
	c := claimed{message: n.message([]model.Notice{x}), msg: n.msgName()}
	release, err := n.rec.hold()
	if err != nil {
		return Result{Target: t.name, Err: err}
	}
	err = n.rec.add(Line{At: n.opt.Now(), To: t.name, State: Claimed, Msg: c.msg, IDs: c.IDs, Kind: c.Kind, Text: c.Text})
	release()
	if err != nil {
		return Result{Target: t.name, Err: err}
	}
	l := n.deliver(t, c)
	if l.State == Failed {
		return Result{Target: t.name, Err: errors.New(l.Error), Tries: l.Tries}
	}
	return Result{Target: t.name, Tries: l.Tries}
}
