//go:build etcd

package cli

import _ "github.com/fleetwatch/fleetwatch/planfs/claims/etcdclaims" // registers the etcd backend
