package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/ringdump"
)

// identityJob with the order every rank recorded (D25): both asked for the
// network order with their node's location, and the sequence 0 1 (what the
// identity rings visit).
func orderedJob(t *testing.T) (string, []string) {
	t.Helper()
	dir, paths := identityJob(t)
	for r, p := range paths {
		edit(t, p, func(d *ringdump.Dump) {
			d.Order = &ringdump.Order{Asked: "network", Location: []string{"s/a", "s/b"}[r/2], Network: true, Sequence: []int{0, 1}}
		})
	}
	return dir, paths
}

func TestVerifyChecksTheNodeOrder(t *testing.T) {
	dir, _ := orderedJob(t)
	code, out, errOut := runTool("verify", dir)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "nccom-rings: 4 ranks, 2 channels, 2 nodes: every rank agrees\n", out)

	for _, tc := range []struct {
		name  string
		rank  int
		edit  func(d *ringdump.Dump)
		first string
		kind  string // its hint is the second line
	}{
		{"a rank that decided another sequence", 3, func(d *ringdump.Dump) { d.Order.Sequence = []int{1, 0} },
			"nccom-rings: rank 3: its Postset decided the network order [1 0], but 3 of 4 ranks decided the network order [0 1]", verify.KindDecision},
		// Rank 0 is no reference: the decision most ranks reached is, so
		// rank 0 is named, not rank 1 (as before issue 23).
		{"rank 0 decided another sequence", 0, func(d *ringdump.Dump) { d.Order.Sequence = []int{1, 0} },
			"nccom-rings: rank 0: its Postset decided the network order [1 0], but 3 of 4 ranks decided the network order [0 1]", verify.KindDecision},
		{"a rank that fell back", 1, func(d *ringdump.Dump) { d.Order.Network, d.Order.Sequence, d.Order.Note = false, nil, "fell\nback" },
			`nccom-rings: rank 1: its Postset decided rank order ("fell\nback"), but 3 of 4 ranks decided the network order [0 1]`, verify.KindDecision},
		{"a rank that asked for rank order", 2, func(d *ringdump.Dump) { d.Order.Asked = "rank" },
			"nccom-rings: rank 2 asked NCCOM_RING_NODE_ORDER=rank, but 3 of 4 ranks asked network", verify.KindAsked},
		{"a rank whose location is not its node's", 1, func(d *ringdump.Dump) { d.Order.Location = "s/b" },
			`nccom-rings: rank 1: its record carries the location "s/b", but its node 0 is placed at the location "s/a" (the value most of its ranks carry; D28)`, verify.KindLocation},
		// D28: a tie (one rank each) goes to the head's value, rank 2's
		// of node 1 (ranks 2, 3), so rank 3 is named.
		{"a tie goes to the head", 3, func(d *ringdump.Dump) { d.Order.Location = "s/c" },
			`nccom-rings: rank 3: its record carries the location "s/c", but its node 1 is placed at the location "s/b" (the value most of its ranks carry; D28)`, verify.KindLocation},
		// "No location" is a value: rank 0 without one ties with rank 1,
		// and rank 0 is the head, so node 0 has none; rank 1 is named,
		// and the sequence the ranks decided is not the placement's.
		{"no location counts", 0, func(d *ringdump.Dump) { d.Order.Location = "" },
			"nccom-rings: every rank decided the network order [0 1], but the locations their records carry give [1 0] (D28's placement, which the library and the tools share)", verify.KindSequence},
		// The hashes place a rank, whatever its name says.
		{"the hashes decide", 1, func(d *ringdump.Dump) {
			d.Order.FromRecord, d.Order.LocationHashes = true, []uint32{nodeorder.Hash("s"), nodeorder.Hash("z")}
		}, fmt.Sprintf(`nccom-rings: rank 1: its record carries the location "#%08x/#%08x", but its node 0 is placed at the location "s/a" (the value most of its ranks carry; D28)`, nodeorder.Hash("s"), nodeorder.Hash("z")), verify.KindLocation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, paths := orderedJob(t)
			edit(t, paths[tc.rank], tc.edit)
			code, out, _ := runTool("verify", dir)
			assert.Equal(t, cli.ExitFinding, code)
			assert.Equal(t, tc.first+"\n", firstLine(out))
			assert.Equal(t, tc.first+"\n  check: "+verify.Hint(tc.kind)+"\n", firstFinding(out))
		})
	}

	// Rings that do not follow the sequence every rank decided.
	dir, paths := orderedJob(t)
	for _, p := range paths {
		edit(t, p, func(d *ringdump.Dump) { d.Order.Sequence = []int{0, 1, 0} })
	}
	code, out, _ = runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t, "nccom-rings: channel 0: the ring visits the nodes [0 1], not in the sequence [0 1 0] every rank decided\n  check: "+verify.Hint(verify.KindSequence)+"\n", firstFinding(out))
}

// firstFinding is the first finding of verify's text output: its line and
// its hint's.
func firstFinding(s string) string {
	line := firstLine(s)
	return line + firstLine(s[len(line):])
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i+1]
		}
	}
	return s
}
