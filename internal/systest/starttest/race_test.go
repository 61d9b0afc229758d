//go:build race

package starttest

// raceBuild: the fleetwatch measured is built with -race as this test is,
// so it reuses the packages the race build of the tests compiled.
const raceBuild = true
