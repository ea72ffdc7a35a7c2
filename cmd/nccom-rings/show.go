package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/ringdump"
)

// shownRank is one rank's row of `show`; Dev is nil without a GetNetDev
// answer for the channel, the ring fields are zero for a failed rank.
type shownRank struct {
	Rank      int    `json:"rank"`
	Node      int    `json:"node"`
	Prev      int    `json:"prev"`
	Next      int    `json:"next"`
	Dev       *int   `json:"dev"`
	UserRanks []int  `json:"userRanks,omitempty"`
	Result    int    `json:"result"`
	Warn      string `json:"warn,omitempty"`
}

type shownChannel struct {
	Channel   int         `json:"channel"`
	NChannels int         `json:"nChannels"`
	Ranks     []shownRank `json:"ranks"`
}

// userRanksHead is how many userRanks the table prints.
const userRanksHead = 8

func runShow(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("show")
	channel := fs.Int("channel", 0, "")
	asJSON := fs.Bool("json", false, "")
	asDot := fs.Bool("dot", false, "")
	operands, code, ok := parseArgs(fs, showHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	if *asJSON && *asDot {
		fmt.Fprintf(stderr, "nccom-rings show: --json and --dot exclude each other\n")
		return cli.ExitUnusable
	}
	_, files, unusable, ok := readDumps("show", showHelp, operands, stderr)
	if !ok {
		return cli.ExitUnusable
	}
	shown, err := channelOf(files, *channel)
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings show: %v\n", err)
		return cli.ExitUnusable
	}
	switch {
	case *asJSON:
		writeJSON(stdout, shown)
	case *asDot:
		writeDot(stdout, shown)
	default:
		writeTable(stdout, shown)
	}
	if unusable > 0 {
		return cli.ExitUnusable // the rows shown are the other files'
	}
	return cli.ExitOK
}

// channelOf gathers channel c from every rank's dump (the first file of a
// rank that has several), in rank order.
func channelOf(files []ringdump.File, c int) (shownChannel, error) {
	shown := shownChannel{Channel: c, Ranks: []shownRank{}}
	seen := map[int]bool{}
	for _, f := range files {
		d := f.Dump
		if seen[d.Rank] {
			continue
		}
		seen[d.Rank] = true
		row := shownRank{Rank: d.Rank, Result: d.Result, Warn: d.Warn}
		if d.Wiring != nil {
			if c < 0 || c >= len(d.Channels) {
				return shown, fmt.Errorf("channel %d is outside [0, %d) of rank %d (%s)", c, len(d.Channels), d.Rank, quote.String(f.Path))
			}
			shown.NChannels = max(shown.NChannels, d.NChannels)
			ch := d.Channels[c]
			row.Node, row.Prev, row.Next, row.UserRanks = d.Node, ch.Prev, ch.Next, ch.UserRanks
			for _, nd := range d.NetDevs {
				if nd.Channel == c {
					row.Dev = &nd.Dev
				}
			}
		}
		shown.Ranks = append(shown.Ranks, row)
	}
	return shown, nil
}

func writeTable(w io.Writer, s shownChannel) {
	fmt.Fprintf(w, "channel %d of %d, %d ranks\n", s.Channel, s.NChannels, len(s.Ranks))
	fmt.Fprintf(w, "%6s %5s %6s %6s %4s  %s\n", "RANK", "NODE", "PREV", "NEXT", "NIC", "USERRANKS")
	for _, r := range s.Ranks {
		if r.Result != 0 {
			fmt.Fprintf(w, "%6d  failed: %s\n", r.Rank, quote.String(r.Warn))
			continue
		}
		dev := "-"
		if r.Dev != nil {
			dev = fmt.Sprint(*r.Dev)
		}
		head := r.UserRanks[:min(len(r.UserRanks), userRanksHead)]
		text := strings.Trim(fmt.Sprint(head), "[]")
		if len(r.UserRanks) > len(head) {
			text += " ..."
		}
		fmt.Fprintf(w, "%6d %5d %6d %6d %4s  %s\n", r.Rank, r.Node, r.Prev, r.Next, dev, text)
	}
}

// writeDot writes the channel as a Graphviz digraph: one cluster per node,
// one edge per rank to its next. Failed ranks have no edge.
func writeDot(w io.Writer, s shownChannel) {
	fmt.Fprintf(w, "digraph \"channel %d\" {\n  label=\"channel %d of %d\";\n  node [shape=circle];\n", s.Channel, s.Channel, s.NChannels)
	nodes := map[int][]int{}
	var order []int
	for _, r := range s.Ranks {
		if r.Result != 0 {
			fmt.Fprintf(w, "  \"%d\" [color=red, label=\"%d (failed)\"];\n", r.Rank, r.Rank)
			continue
		}
		if _, ok := nodes[r.Node]; !ok {
			order = append(order, r.Node)
		}
		nodes[r.Node] = append(nodes[r.Node], r.Rank)
	}
	for _, n := range order {
		fmt.Fprintf(w, "  subgraph cluster_node%d {\n    label=\"node %d\";\n", n, n)
		for _, r := range nodes[n] {
			fmt.Fprintf(w, "    \"%d\";\n", r)
		}
		fmt.Fprintf(w, "  }\n")
	}
	for _, r := range s.Ranks {
		if r.Result == 0 {
			fmt.Fprintf(w, "  \"%d\" -> \"%d\";\n", r.Rank, r.Next)
		}
	}
	fmt.Fprintf(w, "}\n")
}
