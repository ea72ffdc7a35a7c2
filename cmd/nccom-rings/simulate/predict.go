package simulate

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
)

// Algorithms and collectives, in the order rows are printed. The
// collectives' names are lowercase, as nccom-rings ab compare reads them
// ("allreduce").
var (
	Algorithms  = []string{"flat", "hierarchical"}
	Collectives = []string{"allreduce", "allgather", "reducescatter"}
)

// Order is one job's rings under a name ("rank", "network", a directory).
type Order struct {
	Name string
	Job  *score.Job
}

// Options is what to predict.
type Options struct {
	Model             Model
	Oversubscriptions []Oversubscription
	Algorithms        []string
	Bytes             []int64
	Engine            string
}

// Prediction is one row: one order, algorithm, collective,
// oversubscription and message size.
type Prediction struct {
	Order            string  `json:"order"`
	Algorithm        string  `json:"algorithm"`
	Collective       string  `json:"collective"`
	Oversubscription string  `json:"oversubscription"`
	Bytes            int64   `json:"bytes"`
	Seconds          float64 `json:"seconds"`
	BusbwGbps        float64 `json:"busbw_gbps"`
}

// Bottleneck is the most loaded link of one level in one steady state.
type Bottleneck struct {
	Order            string  `json:"order"`
	Algorithm        string  `json:"algorithm"`
	Oversubscription string  `json:"oversubscription"`
	Level            string  `json:"level"` // "nic", "L1", "L2"...
	Link             string  `json:"link"`
	Flows            int     `json:"flows"` // flows crossing it
	UsedGbps         float64 `json:"used_gbps"`
	CapacityGbps     float64 `json:"capacity_gbps"`
}

// Report is simulate's answer (its --json document).
type Report struct {
	Predictions []Prediction `json:"predictions"`
	Bottlenecks []Bottleneck `json:"bottlenecks"`
	Assumptions []string     `json:"assumptions"`
}

// Steady is one steady state of a job's rings under one algorithm:
// every inter-node flow's rate, and what a step of it moves.
type Steady struct {
	// Rates are the flows' rates, bytes/s.
	Rates []float64
	// Parts is how many equal parts a message is split into per step:
	// channels x ranks (flat), ranks a node x nodes (hierarchical).
	Parts int
	// Ring is the ring length whose steps the collective takes: all
	// ranks (flat), the nodes (hierarchical).
	Ring int
	net  *network
	sol  *solved
}

// Solve builds j's network and flows for algorithm and solves them.
func Solve(engine string, j *score.Job, algorithm string, m Model, o Oversubscription) (*Steady, error) {
	if err := j.Check(); err != nil {
		return nil, err
	}
	n, err := buildNetwork(j, m, o)
	if err != nil {
		return nil, err
	}
	st := &Steady{net: n}
	var flows []flow
	switch algorithm {
	case "flat":
		flows = flatFlows(j, n)
		st.Parts, st.Ring = len(j.Rings)*j.NRanks, j.NRanks
	case "hierarchical":
		var local int
		if flows, local, err = hierarchicalFlows(j, n); err != nil {
			return nil, err
		}
		st.Parts, st.Ring = local*j.NNodes, j.NNodes
	default:
		return nil, fmt.Errorf("algorithm %q: flat or hierarchical", algorithm)
	}
	if len(flows) == 0 {
		return nil, fmt.Errorf("no ring edge between nodes (%d node): nothing crosses the network", j.NNodes)
	}
	if st.sol, err = solve(engine, n, flows); err != nil {
		return nil, err
	}
	st.Rates = st.sol.rate
	return st, nil
}

// flatFlows is every inter-node edge of every channel: rank r to the
// next rank of its ring, each on its own NIC of that channel (netDev;
// unknown as NIC 0).
func flatFlows(j *score.Job, n *network) []flow {
	var flows []flow
	for c, ring := range j.Rings {
		for i, r := range ring {
			next := ring[(i+1)%len(ring)]
			a, b := j.Node[r], j.Node[next]
			if a == b {
				continue // intra-node: not the network's
			}
			flows = append(flows, flow{links: n.route(a, nic(j, c, r), b, nic(j, c, next))})
		}
	}
	return flows
}

func nic(j *score.Job, c, r int) int { return max(0, j.NetDev[c*j.NRanks+r]) }

// hierarchicalFlows is the inter-node phase of the hierarchical
// algorithm: for each local index i, a ring of the nodes' i-th ranks in
// channel 0's node sequence, each rank on its own NIC (ownNICs).
func hierarchicalFlows(j *score.Job, n *network) ([]flow, int, error) {
	ranks := make([][]int, j.NNodes) // node -> its ranks, ascending
	for r, m := range j.Node {
		ranks[m] = append(ranks[m], r)
	}
	local := len(ranks[0])
	for m := range ranks {
		if len(ranks[m]) != local {
			return nil, 0, fmt.Errorf("hierarchical: node %d has %d ranks, node 0 %d: the model needs as many on every node (--algorithm flat models the rings as built)", m, len(ranks[m]), local)
		}
	}
	var seq []int // channel 0's nodes in ring order
	seen := make([]bool, j.NNodes)
	for _, r := range j.Rings[0] {
		if m := j.Node[r]; !seen[m] {
			seen[m] = true
			seq = append(seq, m)
		}
	}
	var flows []flow
	if len(seq) < 2 {
		return nil, local, nil
	}
	own := ownNICs(j, ranks, n.nics)
	for i := range local {
		for k, a := range seq {
			b := seq[(k+1)%len(seq)]
			ra, rb := ranks[a][i], ranks[b][i]
			flows = append(flows, flow{links: n.route(a, own[ra], b, own[rb])})
		}
	}
	return flows, local, nil
}

// ownNICs is the NIC each rank's inter-node traffic uses in the
// hierarchical model: the library's own answer where it gives one, its
// netDev (ncclTopoGetNetDev, D18) on the lowest channel whose ring
// enters or leaves its node at that rank. There the rank is the
// channel's head or tail on its node, and GetNetDev answers the NIC the
// graph attached to that core (graph->inter[2c] for the head, [2c+1] for
// the tail), the one nearest it. On the other channels GetNetDev answers
// the tail's NIC for every non-head rank, which says nothing about the
// rank itself: reading channel 0 alone put 3 of D25's 4 ranks a node on
// one NIC. A rank that is a head or tail on no channel (16 of 32 on the
// default graph of 32 ranks a node) has no answer; local index i of L
// takes NIC i x NICs / L, the ranks spread evenly over the node's NICs
// in order, as the default graph attaches its cores (and as trn1.32xlarge
// pairs 32 NeuronCores with 8 EFA NICs, 4 a NIC). ranks[m] is node m's
// ranks, ascending (local index order); nics[m] its NIC count.
func ownNICs(j *score.Job, ranks [][]int, nics []int) []int {
	own := make([]int, j.NRanks)
	for r := range own {
		own[r] = -1
	}
	for c, ring := range j.Rings {
		for k, r := range ring {
			next := ring[(k+1)%len(ring)]
			if j.Node[r] == j.Node[next] {
				continue
			}
			for _, x := range []int{r, next} { // r leaves its node, next enters its own
				if own[x] < 0 {
					own[x] = j.NetDev[c*j.NRanks+x] // -1 when unknown: the rule below
				}
			}
		}
	}
	for m, rs := range ranks {
		for i, r := range rs {
			if own[r] < 0 {
				own[r] = i * nics[m] / len(rs)
			}
		}
	}
	return own
}

// Steps is how many ring steps a collective takes on a ring of n.
func Steps(collective string, n int) int {
	if collective == "allreduce" {
		return 2 * (n - 1)
	}
	return n - 1
}

// BusFactor is nccl-tests' busbw/algbw for a collective of n ranks.
func BusFactor(collective string, n int) float64 {
	if collective == "allreduce" {
		return 2 * float64(n-1) / float64(n)
	}
	return float64(n-1) / float64(n)
}

// Seconds is the time of collective over bytes (nccl-tests' size: the
// buffer of AllReduce, the whole output of AllGather, the whole input of
// ReduceScatter): steps x the slowest flow's step, each step a latency
// and a part of the message at the flow's rate.
func (st *Steady) Seconds(collective string, bytes int64, latency float64) float64 {
	slowest := math.Inf(1)
	for _, r := range st.Rates {
		slowest = min(slowest, r)
	}
	chunk := float64(bytes) / float64(st.Parts)
	return float64(Steps(collective, st.Ring)) * (latency + chunk/slowest)
}

// Bottlenecks is each level's most loaded link, most used first within
// a level.
func (st *Steady) Bottlenecks() []Bottleneck {
	best := map[string]int{}
	for i, l := range st.net.links {
		if st.sol.crossing[i] == 0 {
			continue
		}
		b, ok := best[l.level]
		if !ok || st.sol.used[i]/l.bps > st.sol.used[b]/st.net.links[b].bps {
			best[l.level] = i
		}
	}
	var out []Bottleneck
	for level, i := range best {
		l := st.net.links[i]
		out = append(out, Bottleneck{Level: level, Link: l.name, Flows: st.sol.crossing[i],
			UsedGbps: st.sol.used[i] * 8 / 1e9, CapacityGbps: l.bps * 8 / 1e9})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Level > out[b].Level }) // nic, then L1, L2...
	return out
}

// Simulate predicts every order under every oversubscription and
// algorithm, for every collective and size.
func Simulate(orders []Order, opt Options) (*Report, error) {
	rep := &Report{Predictions: []Prediction{}, Bottlenecks: []Bottleneck{}, Assumptions: Assumptions(opt)}
	for _, ord := range orders {
		for _, o := range opt.Oversubscriptions {
			for _, alg := range opt.Algorithms {
				st, err := Solve(opt.Engine, ord.Job, alg, opt.Model, o)
				if err != nil {
					return nil, fmt.Errorf("order %s, %s, oversubscription %s: %w", ord.Name, alg, o.Name, err)
				}
				for _, b := range st.Bottlenecks() {
					b.Order, b.Algorithm, b.Oversubscription = ord.Name, alg, o.Name
					rep.Bottlenecks = append(rep.Bottlenecks, b)
				}
				for _, c := range Collectives {
					for _, size := range opt.Bytes {
						s := st.Seconds(c, size, opt.Model.LatencySeconds)
						busbw := float64(size) / s * BusFactor(c, ord.Job.NRanks) * 8 / 1e9
						rep.Predictions = append(rep.Predictions, Prediction{Order: ord.Name, Algorithm: alg,
							Collective: c, Oversubscription: o.Name, Bytes: size, Seconds: s, BusbwGbps: busbw})
					}
				}
			}
		}
	}
	return rep, nil
}

// Assumptions is every guessed parameter and simplification of opt's
// model, one sentence each.
func Assumptions(opt Options) []string {
	m := opt.Model
	a := []string{
		fmt.Sprintf("NIC rate %g Gbit/s each way per NIC (--nic-gbps); a node has as many NICs as the highest netDev its rings use, plus one", m.NICGbps),
		fmt.Sprintf("latency %g us per ring step: one inter-node hop (--latency)", m.LatencySeconds*1e6),
		"fat tree from the locations: one switch group per location prefix (level 1 outermost, the leaf last); a group's uplinks carry what enters it from below over its level's oversubscription; the groups of level 1 meet in a core that is never a bottleneck; a node without a level is a group of its own there",
		"steady state: every inter-node ring edge of every channel is a flow, all started at once, each at its max-min fair rate (SimGrid CM02 with no TCP window, no RTT weighting, no cross traffic: bandwidth and latency factors 1)",
		"time = steps x (latency + part / the slowest flow's rate): the message split evenly over the channels (flat) or the local ranks (hierarchical), every step as slow as the slowest edge",
		"intra-node edges cost nothing: the links inside a node are never the bottleneck",
		"flat: the job's rings as built (every channel); hierarchical: intra-node ReduceScatter and AllGather take no time, and the inter-node ring of each local index visits the nodes in channel 0's node order",
		"busbw as nccl-tests: algbw x 2(N-1)/N (AllReduce), x (N-1)/N (AllGather, ReduceScatter), N all ranks; bytes is nccl-tests' size",
	}
	if m.Static {
		a = append(a, "routing static (D-mod-k): each level's uplink and downlink picked by destination mod uplinks, the destination numbered node x most NICs + NIC in job order (real switches number hosts in ways nobody publishes: a sensitivity, not a prediction); a group has what enters it from below over the ratio, in uplinks of one NIC's rate")
	} else {
		a = append(a, "routing spray (EFA's SRD): each flow spread evenly over all uplinks of a group, so a group's uplinks act as one link of their total rate")
	}
	if slices.Contains(opt.Algorithms, "hierarchical") {
		a = append(a, "hierarchical: every node has the same rank count (as Neuron's groups: the same local indices on every node); each rank's inter-node ring runs on its own NIC: its netDev on the lowest channel where it is its node's head or tail (the NIC the graph attaches to its core), else local index i of L on NIC i x NICs / L (the default graph's and trn1.32xlarge's 4 cores a NIC)")
	}
	return a
}
