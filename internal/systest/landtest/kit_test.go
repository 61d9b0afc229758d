package landtest

import "github.com/fleetwatch/fleetwatch/internal/systest/landkit"

// The kit, by the names these tests have always used.
var (
	landProject  = landkit.LandProject
	write        = landkit.Write
	feature      = landkit.Feature
	approve      = landkit.Approve
	queued       = landkit.Queued
	list         = landkit.List
	stateOf      = landkit.StateOf
	land         = landkit.Land
	wantLanded   = landkit.WantLanded
	gitCmd       = landkit.GitCmd
	readFile     = landkit.ReadFile
	wantNotReady = landkit.WantNotReady
	raceLanders  = landkit.RaceLanders
)

const (
	passCheck = landkit.PassCheck
)
