// Package etcdclaims keeps claims in etcd: one key per plan,
// /fleetwatch/<project id>/leases/<slug>, created by a create-only
// transaction and attached to an etcd lease, so the server expires it; the
// key's create revision is the fencing token, its mod revision the
// compare-and-swap value. Lanes are read from the project's git remote
// (gitclaims.Lanes) or, without one, from the checkout, and plans move on
// git at completion. Built only with `-tags etcd`: the client grows the
// binary by several megabytes.
//
// The stored value is model.EncodeLease of the holder's lease with Token
// left empty: the token (the key's create revision) is known only once
// the put has landed, so every read fills Token from the key itself and the
// etcd lease id from the key's lease field, and no wrapper is needed.
//
// This file and nobuild.go are in every build, so every fleetwatch knows
// the name etcd, checks its settings and tells a build without the tag to
// get one, instead of calling it an unknown backend.
package etcdclaims

import (
	"context"
	"errors"
	"strings"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// backendName is the backend's name in fleetwatch.yaml, --claims and its
// leases, and the build tag that brings its client in.
const backendName = "etcd"

func init() {
	claims.Register(claims.Description{
		Name:   backendName,
		Says:   "an etcd cluster's keys",
		Tag:    backendName,
		Open:   opener,
		Check:  check,
		Where:  where,
		Doctor: doctor,
	})
}

// errNoEndpoints is the one setting etcd cannot do without.
var errNoEndpoints = errors.New("needs endpoints: [http://HOST:2379, …]")

func check(cfg claims.Config) error {
	if len(cfg.Endpoints) == 0 {
		return errNoEndpoints
	}
	return nil
}

// where names the first endpoint: the one a client tries first.
func where(cfg claims.Config) string {
	if len(cfg.Endpoints) == 0 {
		return backendName
	}
	return backendName + " " + cfg.Endpoints[0]
}

// doctor names the cluster without dialling it: a build without the tag
// has no client to dial with, and the first claim says if it is down.
func doctor(_ context.Context, cfg claims.Config) []claims.Finding {
	return []claims.Finding{{Text: "etcd at " + strings.Join(cfg.Endpoints, ", ") + " (a build with -tags etcd)"}}
}
