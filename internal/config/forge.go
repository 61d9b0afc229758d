package config

import (
	"cmp"
	"net/url"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fleetwatch/fleetwatch/internal/refname"
)

// Forge is the `forge:` section: the forge whose pull requests carry the
// project's finished work (forge.go in workers/forge). The zero value is
// no forge: work lands on the integration branch only.
//
//	forge:
//	  kind: gitea                # gitea (Forgejo too), github or gitlab
//	  url: https://git.example.com
//	  repo: team/api             # owner/name (a GitLab group path may nest)
//	  base: main                 # the branch pull requests target
//	  token_env: FORGE_TOKEN     # or token_file: ~/.config/fleetwatch/forge-token
//	  land: auto                 # queue, forge or auto (the default)
type Forge struct {
	Kind string
	// URL is the forge's web address ("" for github means github.com).
	URL  string
	Repo string
	// Base is the branch pull requests target; "" means the integration
	// branch.
	Base string
	// TokenEnv names the variable holding the API token; TokenFile is a
	// file holding it, which only its owner may read. Exactly one is set.
	TokenEnv  string
	TokenFile string
	// Land says who lands: "queue" (fleetwatch's queue pushes the checked
	// commit), "forge" (the forge merges, pinned to the checked commit), or
	// "auto" / "" (queue when the token may push to base, else forge).
	Land string
	Line int // where the section is declared
}

// On reports whether a forge is configured.
func (f Forge) On() bool { return f.Kind != "" }

// The forge kinds.
const (
	ForgeGitea  = "gitea"
	ForgeGitHub = "github"
	ForgeGitLab = "gitlab"
)

// The ways to land through a forge.
const (
	LandAuto  = "auto"
	LandQueue = "queue"
	LandForge = "forge"
)

const forgeKeys = "kind, url, repo, base, token_env, token_file, land"

func parseForge(val *yaml.Node) (Forge, error) {
	f := Forge{Line: val.Line}
	if isNull(val) {
		return f, nil
	}
	if val.Kind != yaml.MappingNode {
		return f, errorf(val.Line, "forge: want a mapping (%s), like forge: {kind: gitea, url: https://git.example.com, repo: team/api, token_env: FORGE_TOKEN}", forgeKeys)
	}
	if err := eachKey(val, "forge: ", f.set); err != nil {
		return f, err
	}
	return f, f.complete(val.Line)
}

// set reads one key of `forge:`; each value is one word.
func (f *Forge) set(key, v *yaml.Node) error {
	if v.Kind != yaml.ScalarNode || v.Value == "" || isNull(v) {
		return errorf(v.Line, "forge: %s: want one word", key.Value)
	}
	set, ok := forgeSetters[key.Value]
	if !ok {
		return errorf(key.Line, "forge: unknown key %q (known: %s)", key.Value, forgeKeys)
	}
	return set(f, v)
}

var forgeSetters = map[string]func(f *Forge, v *yaml.Node) error{
	"kind": func(f *Forge, v *yaml.Node) error {
		if v.Value != ForgeGitea && v.Value != ForgeGitHub && v.Value != ForgeGitLab {
			return errorf(v.Line, "forge: kind: want gitea (Forgejo too), github or gitlab, not %q", v.Value)
		}
		f.Kind = v.Value
		return nil
	},
	"url": func(f *Forge, v *yaml.Node) error {
		u, err := url.Parse(v.Value)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" {
			return errorf(v.Line, "forge: url: want the forge's web address, like https://git.example.com (no user, no query)")
		}
		f.URL = strings.TrimSuffix(v.Value, "/")
		return nil
	},
	"repo": func(f *Forge, v *yaml.Node) error {
		parts := strings.Split(v.Value, "/")
		for _, p := range parts {
			if p == "" || p == "." || p == ".." || strings.ContainsAny(p, " \t\n?#%\\") {
				parts = nil
				break
			}
		}
		if len(parts) < 2 {
			return errorf(v.Line, "forge: repo: want owner/name, like team/api, not %q", v.Value)
		}
		f.Repo = strings.TrimSuffix(v.Value, ".git")
		return nil
	},
	"base": func(f *Forge, v *yaml.Node) error {
		if why := refname.Problem(v.Value); why != "" {
			return errorf(v.Line, "forge: base: git refuses branch name %q (%s)", v.Value, why)
		}
		f.Base = v.Value
		return nil
	},
	"token_env": func(f *Forge, v *yaml.Node) error {
		if !envName().MatchString(v.Value) {
			return errorf(v.Line, "forge: token_env: want a variable name, like FORGE_TOKEN")
		}
		f.TokenEnv = v.Value
		return nil
	},
	"token_file": func(f *Forge, v *yaml.Node) error {
		p := v.Value
		if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") {
			return errorf(v.Line, "forge: token_file: want an absolute path (or ~/…) outside the repository, like ~/.config/fleetwatch/forge-token")
		}
		f.TokenFile = p
		return nil
	},
	"land": func(f *Forge, v *yaml.Node) error {
		if v.Value != LandAuto && v.Value != LandQueue && v.Value != LandForge {
			return errorf(v.Line, "forge: land: want auto, queue (fleetwatch pushes the checked commit) or forge (the forge merges it)")
		}
		f.Land = v.Value
		return nil
	},
}

// complete checks what the keys say together.
func (f *Forge) complete(line int) error {
	for _, rule := range []struct {
		broken bool
		why    string
	}{
		{f.Kind == "", "forge: kind is required: gitea, github or gitlab"},
		{f.Repo == "", "forge: repo is required, like repo: team/api"},
		{f.URL == "" && f.Kind != ForgeGitHub, "forge: url is required for " + f.Kind + ", like url: https://git.example.com"},
		{f.TokenEnv == "" && f.TokenFile == "", "forge: token_env or token_file is required: the token the driver uses (agents never see it)"},
		{f.TokenEnv != "" && f.TokenFile != "", "forge: set token_env or token_file, not both"},
	} {
		if rule.broken {
			return errorf(line, "%s", rule.why)
		}
	}
	f.URL = cmp.Or(f.URL, "https://github.com")
	return nil
}
