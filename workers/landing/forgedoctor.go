package landing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/workers/forge"
)

// DoctorLine is one line `doctor` says of the forge.
type DoctorLine struct {
	Fail, None bool
	Text       string
}

// doctorTimeout bounds doctor's calls to the forge.
const doctorTimeout = 20 * time.Second

// ForgeDoctor says what the project's forge lets fleetwatch do: the
// token, its user and scopes, and the protection the base branch puts
// on the way the project lands.
func ForgeDoctor(project string, s config.Settings) []DoctorLine {
	if !s.Forge.On() {
		return []DoctorLine{{None: true, Text: "forge: none (work lands on the integration branch; forge: in " + config.File + " lands through pull requests)"}}
	}
	f, err := forgeOf(s)
	if err != nil {
		return []DoctorLine{{Fail: true, Text: err.Error()}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), doctorTimeout)
	defer cancel()
	me, err := f.Me(ctx)
	if err != nil {
		return []DoctorLine{{Fail: true, Text: fmt.Sprintf("forge: %s does not take the token: %s", f.Web(), clipLine(err.Error()))}}
	}
	out := []DoctorLine{{Text: fmt.Sprintf("forge: %s %s as %s", s.Forge.Kind, f.Web(), me.Login)}}
	if missing := missingScopes(s.Forge.Kind, me.Scopes); len(missing) > 0 {
		out = append(out, DoctorLine{Fail: true, Text: fmt.Sprintf("forge: the token lacks the scope %s (it has %s): PRs, statuses and merges need it", strings.Join(missing, ", "), strings.Join(me.Scopes, ", "))})
	}
	if ok, err := f.Writer(ctx, me.Login); err != nil || !ok {
		out = append(out, DoctorLine{Fail: true, Text: fmt.Sprintf("forge: %s may not push to %s (%v): the driver pushes each plan's branch", me.Login, s.Forge.Repo, errText(err))})
	}
	base, err := Integration(project, s)
	if err != nil {
		base = s.Forge.Base
	}
	return append(out, protectionLine(ctx, f, s.Forge, base))
}

// missingScopes are the scopes fleetwatch needs that a token's listed
// scopes lack; none when the forge does not list them.
func missingScopes(kind string, have []string) []string {
	if have == nil {
		return nil
	}
	need := map[string][]string{config.ForgeGitHub: {"repo"}, config.ForgeGitLab: {"api"}}[kind]
	var out []string
	for _, n := range need {
		if !slices.Contains(have, n) {
			out = append(out, n)
		}
	}
	return out
}

// protectionLine says what base's protection asks and who lands.
func protectionLine(ctx context.Context, f forge.Forge, s config.Forge, base string) DoctorLine {
	if base == "" {
		return DoctorLine{Fail: true, Text: "forge: no base branch: set base: (or integration:) in " + config.File}
	}
	p, err := f.Protection(ctx, base)
	if err != nil {
		return DoctorLine{Fail: true, Text: fmt.Sprintf("forge: %s's protection could not be read: %s", base, clipLine(err.Error()))}
	}
	mode, queue, _ := landMode(ctx, f, s, base)
	what := base + " is not protected"
	if p.Protected {
		what = fmt.Sprintf("%s is protected (pushes by the token's user: %s; approvals: %d; checks: %s)", base, yesNo(p.PushAllowed), p.Approvals, cmpJoin(p.Checks))
	}
	if mode == config.LandQueue && !p.PushAllowed {
		return DoctorLine{Fail: true, Text: "forge: " + what + ": land: queue cannot push there; use land: forge or auto"}
	}
	who := "the queue pushes the checked commit"
	switch {
	case queue:
		who = "the forge's merge queue lands the checked commit (pinned)"
	case mode == config.LandForge:
		who = "the forge merges the checked commit (pinned)"
	}
	return DoctorLine{Text: "forge: " + what + "; " + who}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func cmpJoin(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}
