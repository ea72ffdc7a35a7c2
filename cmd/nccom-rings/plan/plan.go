// Package plan runs the ring stage of a cluster that is only described,
// not running: the hosts in launch order, each with its location (D25) and
// L ranks, every node with the same graph. It calls the same Go the
// library runs (ring.Preset on every rank, the AllGather, ring.Postset on
// every rank, netdev.GetNetDev on every channel), so what it returns is
// what a job would build, without a job. Pure Go, no cgo.
//
// Limits: at most MaxRanks ranks (Postset on every rank costs
// O(nRanks^2 * channels), as ringstage's simulator, which has the same
// bound); 1 to layout.MaxLocalRanks ranks a node; a hostfile holds at
// most MaxRanks hosts and is read under location.ReadFile's limits.
package plan

import (
	"fmt"
	"runtime"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/netdev"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/ring"
	"github.com/nccomring/libnccomring/ringdump"
	"github.com/nccomring/libnccomring/version"
)

// MaxRanks bounds a plan: ringstage's bound (MAX_HOST_RANKS).
const MaxRanks = 4096

// DefaultGraphName says which graph a plan without one uses.
const DefaultGraphName = "the embedded default cluster's (ringstage's: 8 ring channels, min(8, L) NICs)"

// Cluster is a described cluster: node m is Hosts[m], at Locations[m]
// ("" none), with ranks m*RanksPerNode .. (m+1)*RanksPerNode-1, the
// node-major numbering a launcher gives a hostfile's hosts. Every node has
// Graph's graph, or DefaultGraph's when Graph is nil.
type Cluster struct {
	Hosts        []string
	Locations    []string
	RanksPerNode int
	Graph        *GraphFile
}

// DefaultGraph is node m's graph of the embedded default cluster
// (cluster_default_sized in tests/c/common/cluster.c, the graph `make
// demo` runs): 8 channels over the node's cores = L ranks from first,
// min(8, L) NICs with core i on NIC i*NICs/L; channel c starts at core
// c*L/8 and runs forward for even c, backward for odd c, entering on its
// first core's NIC and leaving on its last's.
func DefaultGraph(first, cores int) *abi.TopoGraph {
	const channels, maxNICs = 8, 8
	nics := min(cores, maxNICs)
	g := &abi.TopoGraph{Pattern: 4, MinChannels: 1, MaxChannels: layout.MaxChannels, NChannels: channels}
	for i := range g.Inter {
		g.Inter[i] = -1
	}
	for c := range channels {
		start, step := (c*cores/channels)%cores, 1
		if c%2 == 1 {
			step = cores - 1
		}
		for i := range cores {
			g.Intra[c*cores+i] = int32(first + (start+i*step)%cores)
		}
		g.Inter[2*c] = int32((start % cores) * nics / cores)
		g.Inter[2*c+1] = int32(((start + (cores-1)*step) % cores) * nics / cores)
	}
	return g
}

// Result is one plan: the job to score, and what Postset decided about the
// node order (the same on every rank).
type Result struct {
	Job   *score.Job
	Order ring.Order
	// GraphChannels and NChannels are Postset's: before and after
	// doubling (D10).
	GraphChannels, NChannels int
}

// Run plans cl with every rank asking for the network order (network) or
// not, every rank's NCCOM_RING_LOCATION its node's. dump, when not nil,
// is given every rank's dump as the library would write it, in rank
// order; its error stops the plan. An error of the ring stage names the
// call and the rank, with the library's WARN text.
func Run(cl Cluster, network bool, dump func(*ringdump.Dump) error) (*Result, error) {
	return run(cl, network, dump, MaxRanks, true)
}

// MaxRingsRanks bounds Rings: 65,536 ranks, the most the library's
// record and layout take (nccom-rings simulate's bound).
const MaxRingsRanks = 65536

// Rings is Run without dumps for up to MaxRingsRanks ranks: Preset on
// every rank, but Postset on rank 0 alone, whose rings are every rank's
// (D24, D27: the rings come from the gathered fragments); every other
// rank's node is its host's place (D8 with node-major ranks) and its
// NICs GetNetDev's, as in Run. For nccom-rings simulate, whose jobs are
// too large for Postset on every rank.
func Rings(cl Cluster, network bool) (*Result, error) {
	return run(cl, network, nil, MaxRingsRanks, false)
}

func run(cl Cluster, network bool, dump func(*ringdump.Dump) error, maxRanks int, every bool) (*Result, error) {
	nNodes, local := len(cl.Hosts), cl.RanksPerNode
	switch {
	case nNodes < 1:
		return nil, fmt.Errorf("no host")
	case len(cl.Locations) != nNodes:
		return nil, fmt.Errorf("%d locations for %d hosts", len(cl.Locations), nNodes)
	case local < 1 || local > layout.MaxLocalRanks:
		return nil, fmt.Errorf("%d ranks a node: outside [1, %d]", local, layout.MaxLocalRanks)
	case cl.Graph != nil && cl.Graph.LocalRanks != local:
		return nil, fmt.Errorf("%d ranks a node, but the graph of %s has %d", local, quote.String(cl.Graph.Path), cl.Graph.LocalRanks)
	case nNodes*local > maxRanks:
		return nil, fmt.Errorf("%d hosts x %d ranks = %d ranks: more than the %d a plan runs", nNodes, local, nNodes*local, maxRanks)
	}
	nRanks := nNodes * local
	locs, err := score.ParseLocations(cl.Locations)
	if err != nil {
		return nil, err
	}
	graphs := make([]*abi.TopoGraph, nNodes)
	for m := range graphs {
		if cl.Graph != nil {
			graphs[m] = cl.Graph.Graph(m * local)
		} else {
			graphs[m] = DefaultGraph(m*local, local)
		}
	}
	platform := kanga.Fixed{} // not TRN3-SwitchV1: D25 does not apply there

	// Preset on every rank into its fragment: what the AllGather gathers.
	frags := make([]abi.TopoRanks, nRanks)
	all := make([]*abi.TopoRanks, nRanks)
	comm := new(abi.Comm)
	for r := range nRanks {
		*comm = abi.Comm{}
		comm.Rank, comm.NRanks, comm.LocalRanks = int32(r), int32(nRanks), int32(local)
		opt := ring.PresetOptions{Platforms: platform, Network: network, Location: locs[r/local]}
		if err := ring.Preset(comm, graphs[r/local], &frags[r], opt); err != nil {
			return nil, &StageError{Rank: r, Err: err}
		}
		all[r] = &frags[r]
	}

	// Postset on every rank, one communicator reused: of a communicator
	// Postset reads the rank, the rank count, enablePod and
	// nKangaRingChannels (zero, as a host allocates it) and the userRanks
	// buffers, here this plan's Go memory, kept alive below; never what
	// Preset wrote into it (D24, D27: the rings come from the fragments).
	res := &Result{Job: &score.Job{NRanks: nRanks, Node: make([]int, nRanks)}}
	buffers := make([]int32, layout.MaxChannels*nRanks)
	heads := make([]int32, nRanks)
	sys := &abi.TopoSystem{Nodes0Count: int32(local)}
	var out ring.PostsetResult
	for r := range nRanks {
		// The host's place: D8 with node-major ranks, what Rings takes
		// past rank 0; Postset's node where it runs.
		m := r / local
		if every || r == 0 {
			*comm = abi.Comm{}
			comm.Rank, comm.NRanks, comm.LocalRanks = int32(r), int32(nRanks), int32(local)
			for c := range comm.Channels {
				comm.Channels[c].Ring.UserRanks = abi.Address(buffers[c*nRanks : (c+1)*nRanks])
			}
			out, err = ring.Postset(comm, heads, all, ring.PostsetOptions{Platforms: platform, Sequence: true})
			runtime.KeepAlive(buffers)
			if err != nil {
				return nil, &StageError{Rank: r, Err: err}
			}
			if r == 0 {
				j := res.Job
				res.Order, res.GraphChannels, res.NChannels = out.Order, out.GraphChannels, out.NChannels
				j.NNodes, j.GraphChannels = out.NNodes, out.GraphChannels
				j.Host, j.Location = make([]string, out.NNodes), make([]string, out.NNodes)
				j.Heads = ringdump.Ints(heads[:out.NNodes])
				j.NetDev = make([]int, out.NChannels*nRanks)
				for c := range out.NChannels {
					j.Rings = append(j.Rings, ringdump.Ints(buffers[c*nRanks:(c+1)*nRanks]))
				}
			}
			// D8 numbers nodes by their lowest rank; with node-major
			// ranks that is the host's place, but say it from the rank
			// itself.
			m = int(comm.Node)
		}
		j := res.Job
		j.Node[r] = m
		j.Host[m], j.Location[m] = cl.Hosts[r/local], cl.Locations[r/local]
		for c := range out.NChannels {
			dev, err := netdev.GetNetDev(sys, int32(r), graphs[r/local], int32(c))
			if err != nil {
				return nil, &StageError{Rank: r, Err: err}
			}
			j.NetDev[c*nRanks+r] = int(dev)
		}
		if dump == nil {
			continue
		}
		d := &ringdump.Dump{Rank: r, NRanks: nRanks, ResultName: abi.Success.String(),
			Version: version.Library, Host: cl.Hosts[r/local]}
		for c := range out.NChannels {
			d.SetNetDev(c, j.NetDev[c*nRanks+r])
		}
		d.Wiring = &ringdump.Wiring{NNodes: out.NNodes, Node: m, NodesFirstRank: ringdump.Ints(heads[:out.NNodes]),
			GraphChannels: out.GraphChannels, NChannels: out.NChannels}
		for c := range out.NChannels {
			ch := comm.Channels[c].Ring
			d.Channels = append(d.Channels, ringdump.Channel{Channel: c, Prev: int(ch.Prev), Next: int(ch.Next),
				UserRanks: ringdump.Ints(buffers[c*nRanks : (c+1)*nRanks])})
		}
		// What the library writes (D28): the rank's own gathered record,
		// and its name, the node's, as its environment would hold it.
		o := out.Order
		own := ringdump.Own{Valid: out.OwnValid, Network: out.Own.Network, Location: out.Own.Location, Env: cl.Locations[r/local]}
		d.Order = ringdump.OrderOf(own, o.Asked, o.Network, o.Warn+o.Info, o.Sequence)
		if err := dump(d); err != nil {
			return nil, err
		}
	}
	return res, res.Job.Check()
}

// StageError is the ring stage refusing the cluster on one rank: the
// library's error (an *abi.Error or a *ring.RingsError, its text the WARN
// a job would print).
type StageError struct {
	Rank int
	Err  error
}

func (e *StageError) Error() string { return fmt.Sprintf("rank %d: %v", e.Rank, e.Err) }

func (e *StageError) Unwrap() error { return e.Err }

// NetworkOrder is the hosts' places in D25's node sequence, as the
// library orders nodes (nodeorder.Arrange, D28), each host a node whose
// ranks all carry its location; hosts without one last. A hostfile in
// this order makes rank order itself follow the network.
func NetworkOrder(locations []string) ([]int, error) {
	locs, err := score.ParseLocations(locations)
	if err != nil {
		return nil, err
	}
	nodes := make([]int32, len(locs)) // one rank a host, its own head
	for m := range nodes {
		nodes[m] = int32(m)
	}
	return ringdump.Ints(nodeorder.Arrange(locs, nodes, nodes, nil).Sequence), nil
}
