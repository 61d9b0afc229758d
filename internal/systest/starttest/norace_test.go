//go:build !race

package starttest

const raceBuild = false
