//go:build etcd

package cli

import _ "fleetwatch/planfs/claims/etcdclaims" // registers the etcd backend
