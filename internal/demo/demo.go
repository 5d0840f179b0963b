// Package demo runs `interlink lab demo`: the story of the source articles
// told on a lab built for it. A three-node cluster whose hosts all say MTU
// 9000 on the interconnect, with one node's switch port left at 1500, and a
// public network honestly at 1500. The demo starts `interlink agent` on
// every node, audits each node with `interlink check`, proves every path
// with `interlink mesh --expect 9000`, measures 8 KiB blocks and a TCP
// stream with `interlink bench` across a 9000 and a 1500 path, runs Cache
// Fusion across every node with `interlink bench --mode gc` (the lost
// blocks through the bad port), and derives what an operator should do.
//
// The demo reimplements none of these: it runs the interlink binary itself
// inside the lab's nodes (lab.Node.Start) with --json and decodes the
// commands' own result types (rules.Result, mesh.Result, traffic.Result,
// gc.Report).
// Every figure in a Result was measured in that run.
package demo

import (
	"errors"
	"time"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/traffic"
)

// Schema is the schema of `interlink lab demo --json`.
const Schema = "interlink.demo/v1"

// Builtin is the lab topology the demo builds (internal/lab/builtin/demo.yaml).
const Builtin = "demo"

// Defaults of Options.
const (
	DefaultTime  = 10 * time.Second
	DefaultBlock = 8 << 10
	// ExpectMTU is the path MTU the interconnect is meant to have.
	ExpectMTU = 9000
	// LoadedOutstanding is the blocks in flight of the loaded runs.
	LoadedOutstanding = 8
)

// The switches of the demo topology: the interconnect and the public network.
const (
	icSwitch  = "ic"
	pubSwitch = "pub"
)

// ErrInterrupted is returned by Run when its context ended; the Result
// still holds what was measured until then.
var ErrInterrupted = errors.New("interrupted")

// Options tune Run. Zero values take the defaults.
type Options struct {
	Lab    string        // lab name (default "demo")
	Binary string        // the interlink executable run inside the nodes (required)
	Time   time.Duration // each blocks run; each TCP run takes half (default 10s)
	Block  int           // block size in bytes (default 8 KiB)
	// Keep leaves the lab and its agents up after a finished run (an
	// interrupted run always removes the lab).
	Keep bool
	// Progress, when set, is told what is being measured, about once a
	// second during long steps; "" means the step ended.
	Progress func(msg string)
	// Section, when set, is called when a section of the Result is complete,
	// so a renderer can tell the story as it unfolds.
	Section func(s Section, r *Result)
}

// Section names the parts of a Result in the order they are filled.
type Section int

// Sections.
const (
	SectionLab Section = iota
	SectionCheck
	SectionMesh
	SectionBlocks
	SectionTCP
	SectionGC
	SectionAdvice
)

// Result is everything the demo measured (schema interlink.demo/v1).
type Result struct {
	Schema   string        `json:"schema"`
	Lab      string        `json:"lab"`
	Binary   string        `json:"binary"` // the interlink executable run in the nodes
	Topology *lab.Topology `json:"topology"`
	// LabUp is how long building the lab took.
	LabUp time.Duration `json:"lab_up_ns"`
	// Agents lists where each node's agent listens (its public address).
	Agents []Agent `json:"agents"`
	// Checks holds `interlink check --json --interconnect IF` of every node.
	Checks []NodeCheck `json:"checks"`
	// Mesh is `interlink mesh --json --expect 9000` over the interconnect.
	Mesh *mesh.Result `json:"mesh"`
	// Blocks and TCP are `interlink bench --json` runs: the same pair of
	// nodes over a 9000 path and a 1500 path.
	Blocks []Bench `json:"blocks"`
	TCP    []Bench `json:"tcp"`
	// Loaded are the same blocks runs with LoadedOutstanding in flight:
	// where the hosts' wake-ups no longer hide the wire.
	Loaded []Bench `json:"blocks_loaded,omitempty"`
	// GC is `interlink bench --mode gc --json` across every node: Cache
	// Fusion through the bad port, as the database would feel it.
	GC *GCRun `json:"gc"`
	// Diagnosis is what the measurements say, Advice what to do about it.
	Diagnosis *Diagnosis `json:"diagnosis"`
	Advice    []string   `json:"advice"`
	// Kept is true when the lab was left up (--keep); TokenFile is then
	// the agents' token, for exploring.
	Kept        bool          `json:"kept"`
	TokenFile   string        `json:"token_file,omitempty"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	Interrupted bool          `json:"interrupted,omitempty"`
	Errors      []string      `json:"errors"`
}

// Agent is one node's agent.
type Agent struct {
	Node    string `json:"node"`
	Address string `json:"address"` // host:port it is reached at
	PID     int    `json:"pid"`
}

// NodeCheck is one node's audit.
type NodeCheck struct {
	Node         string        `json:"node"`
	Interconnect string        `json:"interconnect"` // the interface passed as --interconnect
	ExitCode     int           `json:"exit_code"`
	Result       *rules.Result `json:"result"`
	Error        string        `json:"error,omitempty"`
}

// Bench is one `interlink bench` run between two nodes.
type Bench struct {
	Label     string          `json:"label"` // "MTU 9000", "MTU 1500"
	From      string          `json:"from"`
	To        string          `json:"to"`
	Interface string          `json:"interface"` // the sending node's interface
	Address   string          `json:"address"`   // the peer address measured against
	LinkMTU   int             `json:"link_mtu"`  // what the hosts' interfaces say
	Result    *traffic.Result `json:"result"`
	Error     string          `json:"error,omitempty"`
}

// Summary returns the first flow's summary, or nil when the run measured
// nothing.
func (b *Bench) Summary() *traffic.Summary {
	if b.Result == nil || len(b.Result.Flows) == 0 {
		return nil
	}
	return &b.Result.Flows[0].Summary
}

// Diagnosis is what the measurements say about the interconnect.
type Diagnosis struct {
	// Ports are the nodes whose every interconnect path, both directions,
	// is silently limited: their switch port is the suspect.
	Ports []Port `json:"ports"`
	// ProblemPaths and Paths count the mesh's problem paths and all paths.
	ProblemPaths int `json:"problem_paths"`
	Paths        int `json:"paths"`
	// Unexplained counts problem paths that involve none of Ports.
	Unexplained int `json:"unexplained"`
	// ICMPErrors counts problem paths on which an ICMP error came back; with
	// none, tracepath (which trusts only ICMP) reports TracepathMTU, the
	// sending interface's MTU.
	ICMPErrors   int `json:"icmp_errors"`
	TracepathMTU int `json:"tracepath_mtu"`
	// Good is a pair of nodes whose interconnect paths meet the expected
	// MTU both ways: the 9000 side of the comparison runs between them.
	Good [2]string `json:"good_pair"`
}

// Port is a node whose interconnect switch port is at a smaller MTU than
// the node's interface.
type Port struct {
	Node         string `json:"node"`
	Interface    string `json:"interface"`
	Address      string `json:"address"`
	Switch       string `json:"switch"`
	SwitchPort   string `json:"switch_port"`   // the lab's name of that port
	InterfaceMTU int    `json:"interface_mtu"` // what the host says
	PathMTU      int    `json:"path_mtu"`      // what passes, measured
	Verdict      string `json:"verdict"`       // blackhole
	Paths        int    `json:"paths"`         // problem paths to and from it
}
