// Package simulate predicts what a job's rings are worth on its network:
// the time and bus bandwidth of AllReduce, AllGather and ReduceScatter on
// a fat-tree model of the network built from the nodes' locations (D25),
// each ring edge a flow, every flow of every channel at once, their rates
// solved by SimGrid (the engine, engine/engine.cpp) as one steady state.
// docs/simulate.md says what the model is and how to read it.
package simulate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
)

// Model is the network a job's rings are simulated on.
type Model struct {
	// NICGbps is each NIC's rate, each direction.
	NICGbps float64
	// LatencySeconds is added once per ring step (one inter-node hop).
	LatencySeconds float64
	// Static routes each flow over one uplink chosen by its destination
	// (D-mod-k) instead of spreading it over all of them (spray).
	Static bool
}

// Oversubscription is one row of the sweep: Levels[l] is level l+1's
// ratio of what enters a switch from below to what leaves it upwards
// (level 1 outermost, as locations name them); levels past the end take
// Default.
type Oversubscription struct {
	Name    string // as given: "2", "L1:2,L2:4"
	Default float64
	Levels  []float64
}

// ParseOversubscription reads "R" (every level) or "L1:R1,L2:R2" (levels
// not named are 1:1), each R >= 1.
func ParseOversubscription(s string) (Oversubscription, error) {
	o := Oversubscription{Name: s, Default: 1}
	ratio := func(v string) (float64, error) {
		r, err := strconv.ParseFloat(strings.TrimSuffix(v, ":1"), 64)
		if err != nil || r < 1 || r > 1024 || math.IsNaN(r) {
			return 0, fmt.Errorf("oversubscription %q: %q is not a ratio in [1, 1024]", s, v)
		}
		return r, nil
	}
	if !strings.HasPrefix(s, "L") {
		r, err := ratio(s)
		o.Default = r
		return o, err
	}
	for _, part := range strings.Split(s, ",") {
		lv, r, ok := strings.Cut(part, ":")
		l, err := strconv.Atoi(strings.TrimPrefix(lv, "L"))
		if !ok || err != nil || !strings.HasPrefix(lv, "L") || l < 1 || l > 8 {
			return o, fmt.Errorf("oversubscription %q: %q is not Ln:R with n in [1, 8]", s, part)
		}
		v, err := ratio(r)
		if err != nil {
			return o, err
		}
		for len(o.Levels) < l {
			o.Levels = append(o.Levels, 1)
		}
		o.Levels[l-1] = v
	}
	return o, nil
}

func (o Oversubscription) at(level int) float64 { // level counts from 1
	if level-1 < len(o.Levels) {
		return o.Levels[level-1]
	}
	if len(o.Levels) > 0 {
		return 1
	}
	return o.Default
}

// network is the fat tree of a job's nodes: node m's NICs, and above
// them one switch group per location prefix.
type network struct {
	model Model
	depth int
	// group[m][l] is node m's group at level l+1: its location's first
	// l+1 names (hashes); a node without that level is a group alone.
	group   [][]string
	nics    []int // NICs of node m
	maxNICs int
	links   []link
	index   map[string]int // link name -> links index
	// up/down[l][group] are the uplink indices of a group at level l+1
	// (one with spray, K with static).
	up, down []map[string][]int
}

type link struct {
	name  string
	level string // "nic", "L1".. (the switch level whose uplink it is)
	bps   float64
}

// buildNetwork makes j's fat tree under oversubscription o.
func buildNetwork(j *score.Job, m Model, o Oversubscription) (*network, error) {
	locs, err := j.RankLocations()
	if err != nil {
		return nil, err
	}
	n := &network{model: m, index: map[string]int{}}
	first := make([]int, j.NNodes)
	for i := range first {
		first[i] = -1
	}
	for r, node := range j.Node {
		if first[node] < 0 {
			first[node] = r
		}
	}
	n.nics = make([]int, j.NNodes)
	for c := range j.Rings {
		for r := range j.NRanks {
			n.nics[j.Node[r]] = max(n.nics[j.Node[r]], j.NetDev[c*j.NRanks+r]+1)
		}
	}
	for _, r := range first {
		n.depth = max(n.depth, int(locs[r].Levels))
	}
	n.group = make([][]string, j.NNodes)
	for node, r := range first {
		l := locs[r]
		n.nics[node] = max(n.nics[node], 1)
		var key strings.Builder
		for lv := range n.depth {
			if lv < int(l.Levels) {
				fmt.Fprintf(&key, "/%08x", l.Hash[lv])
			} else { // no such level: a group of its own
				fmt.Fprintf(&key, "/node%d", node)
			}
			n.group[node] = append(n.group[node], key.String())
		}
	}
	n.maxNICs = slices.Max(n.nics)
	nicBps := m.NICGbps * 1e9 / 8
	for node := range j.NNodes {
		for i := range n.nics[node] {
			n.add(fmt.Sprintf("tx.n%d.nic%d", node, i), "nic", nicBps)
			n.add(fmt.Sprintf("rx.n%d.nic%d", node, i), "nic", nicBps)
		}
	}
	// Capacities from the leaves up: what enters a group from below
	// (its nodes' NICs, or its children's uplinks), over the level's
	// ratio, in ports of one NIC's rate for static routing.
	n.up, n.down = make([]map[string][]int, n.depth), make([]map[string][]int, n.depth)
	below := map[string]float64{} // group -> bytes/s entering it from below
	ports := map[string]float64{}
	for node := range j.NNodes {
		if n.depth > 0 {
			g := n.group[node][n.depth-1]
			below[g] += float64(n.nics[node]) * nicBps
			ports[g] += float64(n.nics[node])
		}
	}
	for lv := n.depth - 1; lv >= 0; lv-- {
		n.up[lv], n.down[lv] = map[string][]int{}, map[string][]int{}
		next, nextPorts := map[string]float64{}, map[string]float64{}
		for node := range j.NNodes {
			g := n.group[node][lv]
			if _, done := n.up[lv][g]; done {
				continue
			}
			r := o.at(lv + 1)
			total, k := below[g]/r, 1
			if m.Static {
				k = max(1, int(math.Floor(ports[g]/r+1e-9)))
			}
			for i := range k {
				name := fmt.Sprintf("L%d%s.%d", lv+1, g, i)
				n.up[lv][g] = append(n.up[lv][g], n.add("up."+name, fmt.Sprintf("L%d", lv+1), total/float64(k)))
				n.down[lv][g] = append(n.down[lv][g], n.add("down."+name, fmt.Sprintf("L%d", lv+1), total/float64(k)))
			}
			if lv > 0 {
				parent := n.group[node][lv-1]
				next[parent] += total
				nextPorts[parent] += ports[g] / r
			}
		}
		for g, v := range next {
			below[g] += v
		}
		for g, v := range nextPorts {
			ports[g] += v
		}
	}
	return n, nil
}

func (n *network) add(name, level string, bps float64) int {
	n.index[name] = len(n.links)
	n.links = append(n.links, link{name: name, level: level, bps: bps})
	return len(n.links) - 1
}

// route is the links a flow from node a's NIC ia to node b's NIC ib
// crosses: a's transmit side, up to below the lowest group both share,
// down to b, b's receive side. Static routing picks each level's
// uplink and downlink by the destination NIC's number (D-mod-k): node
// b's place in the job times the most NICs a node has, plus ib.
func (n *network) route(a, ia, b, ib int) []int {
	r := []int{n.index[fmt.Sprintf("tx.n%d.nic%d", a, ia)]}
	split := n.depth
	for lv := range n.depth {
		if n.group[a][lv] != n.group[b][lv] {
			split = lv
			break
		}
	}
	dst := b*n.maxNICs + ib
	for lv := n.depth - 1; lv >= split; lv-- {
		ups := n.up[lv][n.group[a][lv]]
		r = append(r, ups[dst%len(ups)])
	}
	for lv := split; lv < n.depth; lv++ {
		downs := n.down[lv][n.group[b][lv]]
		r = append(r, downs[dst%len(downs)])
	}
	return append(r, n.index[fmt.Sprintf("rx.n%d.nic%d", b, ib)])
}
