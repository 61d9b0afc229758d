package workers

import (
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/seat"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// Forwarders for the root ui package while it moves (issue 42): the
// last commit rewrites ui's files with the floors' map and deletes this
// file.

var SafeID = tree.SafeID

const Dead = look.Dead
const DetailLogLines = look.DetailLogLines
const DiffFileLines = look.DiffFileLines
const EndpointBackingOff = look.EndpointBackingOff
const EndpointDisabled = look.EndpointDisabled
const EndpointShut = look.EndpointShut
const Exited = look.Exited
const Live = look.Live
const LogDir = look.LogDir
const Stale = look.Stale
const StateDir = look.StateDir
const StateExited = look.StateExited
const StateRunning = look.StateRunning
const StreamErr = look.StreamErr
const StreamFleet = look.StreamFleet

type Diff = look.Diff
type EndpointState = look.EndpointState
type FileDiff = look.FileDiff
type Health = look.Health
type LogFetch = look.LogFetch
type Overlap = look.Overlap
type PortRange = look.PortRange
type Proc = look.Proc
type Published = look.Published
type SpawnOffer = look.SpawnOffer
type Stamp = look.Stamp
type State = look.State
type StateChange = look.StateChange
type StateWatcher = look.StateWatcher
type Tail = look.Tail
type WorkerDetail = look.WorkerDetail
type WorktreeDetail = look.WorktreeDetail
type WorktreeState = look.WorktreeState

var AssignPort = look.AssignPort
var BoardProblems = look.BoardProblems
var BranchCommits = look.BranchCommits
var CapWarnings = look.CapWarnings
var DiffOfPlan = look.DiffOfPlan
var DiffOfWorker = look.DiffOfWorker
var DiffOfWorktree = look.DiffOfWorktree
var Hostname = look.Hostname
var Inspect = look.Inspect
var List = look.List
var LogPath = look.LogPath
var LogTail = look.LogTail
var Offer = look.Offer
var Overlaps = look.Overlaps
var ParseLogLine = look.ParseLogLine
var PausedRuns = look.PausedRuns
var ReadEndpoints = look.ReadEndpoints
var ReadPublished = look.ReadPublished
var ReadStates = look.ReadStates
var ReadWorker = look.ReadWorker
var ReadWorkerDetail = look.ReadWorkerDetail
var ReadWorktreeDetail = look.ReadWorktreeDetail
var ServeElsewhere = look.ServeElsewhere
var TailLog = look.TailLog
var WatchStates = look.WatchStates
var WriteEndpoint = look.WriteEndpoint
var WriteState = look.WriteState

const MaxSpawnPlans = proc.MaxSpawnPlans

type Child = proc.Child
type SpawnSpec = proc.SpawnSpec
type Spec = proc.Spec

var Editor = proc.Editor
var EditorCmd = proc.EditorCmd
var Pause = proc.Pause
var Recover = proc.Recover
var Start = proc.Start
var StartDetachedAs = proc.StartDetachedAs
var StartDetachedWatched = proc.StartDetachedWatched
var StopAs = proc.StopAs
var StopRemote = proc.StopRemote
var UniqueAgentID = proc.UniqueAgentID
var WorkArgs = proc.WorkArgs
var Ensure = seat.Ensure
