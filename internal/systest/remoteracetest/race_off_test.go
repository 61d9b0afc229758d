//go:build !race

package remoteracetest

const raceDetector = false
