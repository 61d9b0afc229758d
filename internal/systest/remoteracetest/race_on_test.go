//go:build race

package remoteracetest

// raceDetector: under -race every fleetwatch process runs several times
// slower, so the race test drains fewer plans a round to stay in CI's
// 90 s per package; `go test ./...` runs the 100.
const raceDetector = true
