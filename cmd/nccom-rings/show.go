package main

import (
	"flag"
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
	Host      string `json:"host"`
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

type showFlags struct {
	channel   int
	json, dot bool
}

var showCommand = &cli.Command{
	Name:    "show",
	Summary: "one channel across ranks: a table, JSON, or Graphviz (--dot)",
	Usage:   []string{"[--channel C] [--json | --dot] DIR"},
	Doc: `Shows channel C (default 0) across the ranks of DIR: each rank's node, prev,
next, NIC (from its ncclTopoGetNetDev answers, - when none) and the head of
its userRanks. It does not verify (see verify); a failed rank is shown with
its WARN, a missing rank not at all.
`,
	Exits: cli.Exits("the channel was shown", "", "unusable input or usage: no such directory, no dump files in it, a file that is not a dump (named, with the byte offset), a bad flag or channel"),
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int {
		var f showFlags
		fs.IntVar(&f.channel, "channel", 0, "the channel `C` to show")
		fs.BoolVar(&f.json, "json", false, `the same as JSON: {"channel", "nChannels", "ranks": [{"rank", "node", "host", "prev", "next", "dev", "userRanks", "result", "warn"}]}`)
		fs.BoolVar(&f.dot, "dot", false, "Graphviz for plain dot: one box per node (index and host), its ranks in ring order in rows, the boxes in a grid; the edges between nodes blue, with the sender's and receiver's NIC index (nccom-rings show --dot DIR | dot -Tsvg > ring.svg)")
		return func(inv *cli.Invocation) int { return runShow(inv, &f) }
	},
}

func runShow(inv *cli.Invocation, f *showFlags) int {
	stdout, stderr := inv.Stdout, inv.Stderr
	if f.json && f.dot {
		inv.Errorf("--json and --dot exclude each other")
		return cli.ExitUnusable
	}
	_, files, unusable, ok := readDumps(inv, inv.Operands)
	if !ok {
		return cli.ExitUnusable
	}
	shown, err := channelOf(files, f.channel)
	if err != nil {
		fmt.Fprintf(stderr, "nccom-rings show: %v\n", err)
		return cli.ExitUnusable
	}
	switch {
	case f.json:
		writeJSON(stdout, shown)
	case f.dot:
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
		row := shownRank{Rank: d.Rank, Host: d.Host, Result: d.Result, Warn: d.Warn}
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

// dotString returns s as a DOT quoted string: '"' and '\' escaped, DOT's
// only escapes there. Text from a dump is passed through quote.String
// first, so its control characters (a newline in a host name) are visible
// escapes by then, and DOT shows that backslash as typed, not as a line
// break: a dump's text can neither end the string nor split the label.
func dotString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// dotRowLen is how many ranks of a node one row holds: about the square
// root of the node's ranks, so that a node of 32 draws as 6 rows of 6 or
// fewer instead of a column of 32, the shape that made 128 ranks a strip.
func dotRowLen(n int) int {
	w := 1
	for w*w < n {
		w++
	}
	return w
}

// ringOrder is the ranks in the order the ring visits them, then the
// ranks the walk did not reach (failed ranks, a ring broken in the dumps)
// in rank order, so every rank is placed once. The walk starts where the
// ring first enters a node (the lowest rank whose prev is on another
// node), else at the first rank: started mid-node, a node the ring
// crosses once would be drawn as two pieces.
func ringOrder(s shownChannel, byRank map[int]shownRank) []int {
	var order []int
	placed := map[int]bool{}
	if len(s.Ranks) > 0 {
		start := s.Ranks[0].Rank
		for _, row := range s.Ranks {
			if prev, ok := byRank[row.Prev]; row.Result == 0 && ok && prev.Result == 0 && prev.Node != row.Node {
				start = row.Rank
				break
			}
		}
		for r := start; ; {
			row, ok := byRank[r]
			if !ok || placed[r] || row.Result != 0 {
				break
			}
			placed[r] = true
			order = append(order, r)
			r = row.Next
		}
	}
	for _, row := range s.Ranks {
		if !placed[row.Rank] {
			placed[row.Rank] = true
			order = append(order, row.Rank)
		}
	}
	return order
}

// writeDot writes the channel as a Graphviz digraph for plain `dot`: one
// cluster per node, labelled with its index and host, holding its ranks in
// ring order in rows (rank=same); the clusters in a grid of about the
// square root of the node count per row, kept there by invisible edges.
// Every ring edge is drawn, but only the in-row edges and the edge from a
// row's end to the next row's start constrain the layout: an inter-node
// edge constraining it would pull the nodes back into one long chain.
// Inter-node edges are blue and labelled with the sender's and receiver's
// NIC index (netDevs); a NIC index unknown to the dumps is left unlabelled.
// Failed ranks stand outside the clusters and have no edge.
func writeDot(w io.Writer, s shownChannel) {
	title := fmt.Sprintf("channel %d of %d", s.Channel, s.NChannels)
	fmt.Fprintf(w, "digraph %s {\n  label=%s;\n  newrank=true;\n  node [shape=circle];\n", dotString(fmt.Sprintf("channel %d", s.Channel)), dotString(title))
	byRank := map[int]shownRank{}
	for _, r := range s.Ranks {
		if _, ok := byRank[r.Rank]; !ok {
			byRank[r.Rank] = r
		}
	}
	members := map[int][]int{}
	var nodeOrder []int
	for _, r := range ringOrder(s, byRank) {
		row := byRank[r]
		if row.Result != 0 {
			fmt.Fprintf(w, "  \"%d\" [color=red, label=\"%d (failed)\"];\n", r, r)
			continue
		}
		if _, ok := members[row.Node]; !ok {
			nodeOrder = append(nodeOrder, row.Node)
		}
		members[row.Node] = append(members[row.Node], r)
	}
	// Where each rank is drawn: the edges that follow the layout constrain it.
	type place struct{ node, row, col int }
	at := map[int]place{}
	var firstRow, lastRow [][]int // per cluster, in nodeOrder
	for _, n := range nodeOrder {
		ranks := members[n]
		fmt.Fprintf(w, "  subgraph cluster_node%d {\n    label=%s;\n", n, dotString(fmt.Sprintf("node %d %s", n, quote.String(byRank[ranks[0]].Host))))
		width := dotRowLen(len(ranks))
		var rows [][]int
		for i := 0; i < len(ranks); i += width {
			rows = append(rows, ranks[i:min(i+width, len(ranks))])
		}
		for ri, row := range rows {
			fmt.Fprintf(w, "    { rank=same;")
			for ci, r := range row {
				at[r] = place{n, ri, ci}
				fmt.Fprintf(w, " \"%d\";", r)
			}
			fmt.Fprintf(w, " }\n")
		}
		// Rows stack in order even where the ring leaves the node mid-way.
		for ri := 1; ri < len(rows); ri++ {
			fmt.Fprintf(w, "    \"%d\" -> \"%d\" [style=invis];\n", rows[ri-1][0], rows[ri][0])
		}
		fmt.Fprintf(w, "  }\n")
		firstRow, lastRow = append(firstRow, rows[0]), append(lastRow, rows[len(rows)-1])
	}
	// The grid: each cluster sits below the one a grid row before it.
	cols := dotRowLen(len(nodeOrder))
	for i := cols; i < len(nodeOrder); i++ {
		fmt.Fprintf(w, "  \"%d\" -> \"%d\" [style=invis];\n", lastRow[i-cols][0], firstRow[i][0])
	}
	for _, r := range s.Ranks {
		if r.Result != 0 {
			continue
		}
		from, to := at[r.Rank], at[r.Next]
		next, known := byRank[r.Next]
		switch {
		case known && next.Result == 0 && next.Node == r.Node:
			inLayout := to.row == from.row && to.col == from.col+1 || to.row == from.row+1 && to.col == 0
			if inLayout {
				fmt.Fprintf(w, "  \"%d\" -> \"%d\";\n", r.Rank, r.Next)
			} else {
				fmt.Fprintf(w, "  \"%d\" -> \"%d\" [constraint=false];\n", r.Rank, r.Next)
			}
		default:
			attrs := "color=blue, fontcolor=blue, penwidth=2, constraint=false"
			if r.Dev != nil {
				attrs += fmt.Sprintf(", taillabel=\"NIC %d\"", *r.Dev)
			}
			if known && next.Dev != nil {
				attrs += fmt.Sprintf(", headlabel=\"NIC %d\"", *next.Dev)
			}
			fmt.Fprintf(w, "  \"%d\" -> \"%d\" [%s];\n", r.Rank, r.Next, attrs)
		}
	}
	fmt.Fprintf(w, "}\n")
}
