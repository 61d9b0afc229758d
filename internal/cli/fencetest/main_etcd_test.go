//go:build etcd

package fencetest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"fleetwatch/internal/cli"
	"fleetwatch/internal/testkit/fwtest"
)

// endpoint is the embedded etcd's client URL; "" when it could not start
// (skipReason says why).
var endpoint, skipReason string

// TestMain starts one embedded etcd on loopback for the package's tests;
// the test binary run as fleetwatch (a driver) starts none.
func TestMain(m *testing.M) {
	if os.Getenv(fwtest.AsFleetwatch) == "1" {
		fwtest.Main(m, cli.Main)
		return
	}
	dir, err := os.MkdirTemp("", "fencetest-etcd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	stop := startEtcd(dir)
	fwtest.Main(m, cli.Main, stop, func() { os.RemoveAll(dir) })
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startEtcd(dir string) (stop func()) {
	cp, err1 := freePort()
	pp, err2 := freePort()
	if err1 != nil || err2 != nil {
		skipReason = fmt.Sprintf("no loopback port for etcd: %v %v", err1, err2)
		return func() {}
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
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		skipReason = "embedded etcd did not start: " + err.Error()
		return func() {}
	}
	select {
	case <-e.Server.ReadyNotify():
		endpoint = cu.String()
	case <-time.After(30 * time.Second):
		skipReason = "embedded etcd not ready in 30 s"
	}
	return func() {
		e.Close()
		select {
		case <-e.Server.StopNotify():
		case <-time.After(10 * time.Second):
		}
	}
}
