//go:build etcd

// Package etcdtest starts an embedded etcd on loopback for the tests that
// need a real one (the etcd claims backend, the fenced driver tests).
package etcdtest

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Start runs one etcd member with its data under dir and returns its
// client URL and how to stop it. When it cannot start, endpoint is "" and
// skip says why, for the tests to skip with. fsync off is for speed; the
// data is thrown away.
func Start(dir string, fsync bool) (endpoint, skip string, stop func()) {
	cp, err1 := FreePort()
	pp, err2 := FreePort()
	if err1 != nil || err2 != nil {
		return "", fmt.Sprintf("no loopback port for etcd: %v %v", err1, err2), func() {}
	}
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(dir, "data")
	cfg.Name = "fw"
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", cp))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", pp))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.LogLevel = "error"
	cfg.UnsafeNoFsync = !fsync
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return "", "embedded etcd did not start: " + err.Error(), func() {}
	}
	stop = func() {
		e.Close()
		select {
		case <-e.Server.StopNotify():
		case <-time.After(10 * time.Second):
		}
	}
	select {
	case <-e.Server.ReadyNotify():
		return cu.String(), "", stop
	case <-time.After(30 * time.Second):
		return "", "embedded etcd not ready in 30 s", stop
	}
}

// FreePort is a loopback port nothing listens on right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
