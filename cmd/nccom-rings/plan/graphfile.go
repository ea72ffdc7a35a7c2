package plan

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"slices"
	"strconv"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/layout"
)

// GraphFile is the RING graph of an NCCL_GRAPH_FILE, read as ringstage's
// --graph reads it (tests/c/common/graph_xml.c), so that a plan and
// ringstage build the same cluster from one file:
//
//	<graphs version="1"><graph id pattern crossnic nchannels ...>
//	  <channel><net dev/>? <gpu dev/>... <net dev/>?</channel> ...
//
// Only the first graph with pattern="4" is read. A node's ranks are
// channel 0's gpu devices in ascending order; a channel's first <net> is
// the NIC it enters on (inter[2c]), its last the one it leaves on
// (inter[2c+1]), -1 for both without one. NChannels is the nchannels
// attribute, as NCCL reads it: a file that says 0 reaches Preset as such,
// and the library, not the reader, refuses it.
type GraphFile struct {
	Path       string
	LocalRanks int
	NChannels  int
	// Order[c][i] is channel c's i-th rank as a local index; NICIn[c]
	// and NICOut[c] its entry and exit NICs.
	Order         [][]int
	NICIn, NICOut []int
}

type xmlGraphs struct {
	XMLName xml.Name   `xml:"graphs"`
	Graphs  []xmlGraph `xml:"graph"`
}

type xmlGraph struct {
	Pattern   string       `xml:"pattern,attr"`
	NChannels string       `xml:"nchannels,attr"`
	Channels  []xmlChannel `xml:"channel"`
}

type xmlChannel struct {
	Devices []xmlDevice `xml:",any"`
}

type xmlDevice struct {
	XMLName xml.Name
	Dev     string `xml:"dev,attr"`
}

// ringPattern is NCCL_TOPO_PATTERN_RING.
const ringPattern = 4

// ReadGraphFile reads path's RING graph (location.ReadFile's limits: a
// regular file of at most 64 MiB). Its errors name the file and what is
// wrong, as ringstage's do.
func ReadGraphFile(path string) (*GraphFile, error) {
	data, err := location.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc xmlGraphs
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: not an NCCL graph file: %v", path, err)
	}
	var g *xmlGraph
	for i := range doc.Graphs {
		if p, err := strconv.Atoi(doc.Graphs[i].Pattern); err == nil && p == ringPattern {
			g = &doc.Graphs[i]
			break
		}
	}
	if g == nil {
		return nil, fmt.Errorf("%s: no <graphs><graph pattern=\"4\"> (RING) element", path)
	}
	nChannels, err := strconv.Atoi(g.NChannels)
	if err != nil {
		return nil, fmt.Errorf("%s: the RING graph has no integer nchannels attribute", path)
	}
	if len(g.Channels) > layout.MaxChannels {
		return nil, fmt.Errorf("%s: more than %d <channel> elements", path, layout.MaxChannels)
	}
	if len(g.Channels) != nChannels {
		return nil, fmt.Errorf("%s: nchannels=\"%d\" but %d <channel> elements", path, nChannels, len(g.Channels))
	}
	f := &GraphFile{Path: path, LocalRanks: 1, NChannels: nChannels}
	devs := make([][]int, nChannels)
	for c, ch := range g.Channels {
		in, out := -1, -1
		for _, e := range ch.Devices {
			name := e.XMLName.Local
			if name != "gpu" && name != "net" {
				continue
			}
			dev, err := strconv.Atoi(e.Dev)
			if err != nil || int(int32(dev)) != dev {
				return nil, fmt.Errorf("%s: channel %d has a <%s> without an integer dev", path, c, name)
			}
			if name == "net" {
				if in < 0 {
					in = dev // the first <net>
				}
				out = dev // the last
				continue
			}
			if len(devs[c]) == layout.MaxLocalRanks {
				return nil, fmt.Errorf("%s: channel %d lists more than %d <gpu>", path, c, layout.MaxLocalRanks)
			}
			devs[c] = append(devs[c], dev)
		}
		if len(devs[c]) == 0 {
			return nil, fmt.Errorf("%s: channel %d lists no <gpu>", path, c)
		}
		f.NICIn, f.NICOut = append(f.NICIn, in), append(f.NICOut, out)
	}
	if nChannels == 0 {
		return f, nil
	}
	sorted := slices.Clone(devs[0])
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return nil, fmt.Errorf("%s: channel 0 lists gpu dev %d twice", path, sorted[i])
		}
	}
	f.LocalRanks = len(sorted)
	for c, ds := range devs {
		if len(ds) != f.LocalRanks {
			return nil, fmt.Errorf("%s: channel %d lists %d <gpu>, channel 0 lists %d", path, c, len(ds), f.LocalRanks)
		}
		order := make([]int, len(ds))
		for i, d := range ds {
			at, found := slices.BinarySearch(sorted, d)
			if !found {
				return nil, fmt.Errorf("%s: channel %d uses gpu dev %d, which channel 0 does not", path, c, d)
			}
			order[i] = at
		}
		f.Order = append(f.Order, order)
	}
	return f, nil
}

// Graph is the graph of the node whose ranks start at first.
func (f *GraphFile) Graph(first int) *abi.TopoGraph {
	g := &abi.TopoGraph{Pattern: ringPattern, MinChannels: 1, MaxChannels: layout.MaxChannels, NChannels: int32(f.NChannels)}
	for i := range g.Inter {
		g.Inter[i] = -1
	}
	for c, order := range f.Order {
		for i, v := range order {
			g.Intra[c*f.LocalRanks+i] = int32(first + v)
		}
		g.Inter[2*c], g.Inter[2*c+1] = int32(f.NICIn[c]), int32(f.NICOut[c])
	}
	return g
}
