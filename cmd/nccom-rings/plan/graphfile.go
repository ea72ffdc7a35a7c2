package plan

import (
	"bufio"
	"encoding/xml"
	"errors"
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

// ringPattern is NCCL_TOPO_PATTERN_RING.
const ringPattern = 4

// MaxGraphDepth is how deep a graph file's elements may nest: about
// libxml2's own limit without XML_PARSE_HUGE (256), which ringstage's
// reader has. NCCL's files nest four deep.
const MaxGraphDepth = 256

// ReadGraphFile reads path's RING graph. The file is streamed, element
// by element, within location.ReadFile's limits (a regular file of at most
// 64 MiB, refused before it is read when larger): only the RING graph's
// channels are kept (at most 32 channels of 256 <gpu>, beyond which it is
// refused), every other element is read and let go, and elements nest at
// most MaxGraphDepth deep, so memory is the decoder's buffer for the
// longest token and the RING graph, not the file (issue 34, F9: a 60 MB
// file took 3 GB as a tree). The whole root element is read, as libxml2
// reads it for ringstage, so a file that is not well formed is refused
// as such even after a RING graph whose error would come first. Its
// errors name the file and what is wrong, as ringstage's do.
func ReadGraphFile(path string) (*GraphFile, error) {
	in, err := location.Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	r := graphReader{path: path, dec: xml.NewDecoder(bufio.NewReaderSize(in, 64<<10))}
	if err := r.read(); err != nil {
		return nil, err
	}
	return r.finish()
}

// graphReader reads a graph file's tokens: the first RING graph's
// channels as they come, everything else skipped by its depth.
type graphReader struct {
	path  string
	dec   *xml.Decoder
	depth int // elements open

	found     bool    // the RING graph was met
	nChannels int     // its nchannels attribute
	devs      [][]int // each channel's <gpu> devs
	in, out   []int   // each channel's first and last <net> dev
	// refused is the first error of the RING graph's content, said once
	// the file has been read whole and found well formed (libxml2 reads
	// it whole before ringstage looks at it).
	refused error
}

// token is the decoder's next token, an error naming the file when the
// file is not XML, is too large, or nests too deep.
func (r *graphReader) token() (xml.Token, error) {
	line, col := r.dec.InputPos() // of the token's first byte
	tok, err := r.dec.Token()
	var le *location.Error
	switch {
	case errors.As(err, &le):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%s: not an NCCL graph file: %v", r.path, err)
	}
	switch tok.(type) {
	case xml.StartElement:
		if r.depth++; r.depth > MaxGraphDepth {
			return nil, fmt.Errorf("%s:%d:%d: not an NCCL graph file: elements nested more than %d deep", r.path, line, col, MaxGraphDepth)
		}
	case xml.EndElement:
		r.depth--
	}
	return tok, nil
}

// attr is the value of start's attribute name ("" without one); the last
// of two, as encoding/xml's Unmarshal took it.
func attr(start xml.StartElement, name string) string {
	v := ""
	for _, a := range start.Attr {
		if a.Name.Local == name {
			v = a.Value
		}
	}
	return v
}

// refuse keeps the first error about the RING graph's content.
func (r *graphReader) refuse(format string, args ...any) {
	if r.refused == nil {
		r.refused = fmt.Errorf("%s: "+format, append([]any{r.path}, args...)...)
	}
}

// read reads the file up to the end of its root element, which must be
// <graphs>.
func (r *graphReader) read() error {
	for {
		tok, err := r.token()
		if err != nil {
			return err // io.EOF too: "not an NCCL graph file: EOF"
		}
		if start, ok := tok.(xml.StartElement); ok {
			if start.Name.Local != "graphs" {
				return fmt.Errorf("%s: not an NCCL graph file: expected element type <graphs> but have <%s>", r.path, start.Name.Local)
			}
			break
		}
	}
	// Inside <graphs> (depth 1): each child element.
	return r.children(func(t xml.StartElement) error {
		p, perr := strconv.Atoi(attr(t, "pattern"))
		if t.Name.Local == "graph" && !r.found && perr == nil && p == ringPattern {
			r.found = true
			return r.ringGraph(t)
		}
		return r.skip()
	})
}

// children reads up to the end of the element whose start was just read,
// calling visit at the start of each child element; visit reads that
// child whole (to its end) before it returns.
func (r *graphReader) children(visit func(xml.StartElement) error) error {
	for {
		tok, err := r.token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return nil
		case xml.StartElement:
			if err := visit(t); err != nil {
				return err
			}
		}
	}
}

// skip reads up to the end of the element whose start was just read.
func (r *graphReader) skip() error {
	for base := r.depth - 1; r.depth > base; {
		if _, err := r.token(); err != nil {
			return err
		}
	}
	return nil
}

// ringGraph reads the RING graph whose start was just read, keeping its
// channels up to the limits.
func (r *graphReader) ringGraph(start xml.StartElement) error {
	n, err := strconv.Atoi(attr(start, "nchannels"))
	if err != nil {
		r.refuse("the RING graph has no integer nchannels attribute")
	}
	r.nChannels = n
	return r.children(func(t xml.StartElement) error {
		if t.Name.Local != "channel" || r.refused != nil {
			return r.skip()
		}
		return r.channel()
	})
}

// channel reads a <channel> of the RING graph whose start was just read.
func (r *graphReader) channel() error {
	c := len(r.devs)
	if c == layout.MaxChannels {
		r.refuse("more than %d <channel> elements", layout.MaxChannels)
		return r.skip()
	}
	r.devs = append(r.devs, nil)
	r.in, r.out = append(r.in, -1), append(r.out, -1)
	return r.children(func(t xml.StartElement) error {
		if name := t.Name.Local; r.refused == nil && (name == "gpu" || name == "net") {
			r.device(c, name, attr(t, "dev"))
		}
		return r.skip()
	})
}

// device takes channel c's <gpu> or <net> of dev.
func (r *graphReader) device(c int, name, value string) {
	dev, err := strconv.Atoi(value)
	switch {
	case err != nil || int(int32(dev)) != dev:
		r.refuse("channel %d has a <%s> without an integer dev", c, name)
	case name == "net":
		if r.in[c] < 0 {
			r.in[c] = dev // the first <net>
		}
		r.out[c] = dev // the last
	case len(r.devs[c]) == layout.MaxLocalRanks:
		r.refuse("channel %d lists more than %d <gpu>", c, layout.MaxLocalRanks)
	default:
		r.devs[c] = append(r.devs[c], dev)
	}
}

// finish checks the RING graph read whole, as ringstage does, and makes
// it a GraphFile.
func (r *graphReader) finish() (*GraphFile, error) {
	path := r.path
	switch {
	case !r.found:
		return nil, fmt.Errorf("%s: no <graphs><graph pattern=\"4\"> (RING) element", path)
	case r.refused != nil:
		return nil, r.refused
	case len(r.devs) != r.nChannels:
		return nil, fmt.Errorf("%s: nchannels=\"%d\" but %d <channel> elements", path, r.nChannels, len(r.devs))
	}
	for c, ds := range r.devs {
		if len(ds) == 0 {
			return nil, fmt.Errorf("%s: channel %d lists no <gpu>", path, c)
		}
	}
	f := &GraphFile{Path: path, LocalRanks: 1, NChannels: r.nChannels, NICIn: r.in, NICOut: r.out}
	if r.nChannels == 0 {
		return f, nil
	}
	sorted := slices.Clone(r.devs[0])
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return nil, fmt.Errorf("%s: channel 0 lists gpu dev %d twice", path, sorted[i])
		}
	}
	f.LocalRanks = len(sorted)
	for c, ds := range r.devs {
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
