package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nccomring/libnccomring/internal/cli"
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
	}{
		{"a rank that decided another sequence", 3, func(d *ringdump.Dump) { d.Order.Sequence = []int{1, 0} },
			"nccom-rings: rank 3: its Postset decided the network order [1 0], but rank 0's the network order [0 1]: the decision comes from the gathered records alone, so the ranks saw different fragments (check the AllGather, or dumps of two runs in one directory)"},
		{"a rank that fell back", 1, func(d *ringdump.Dump) { d.Order.Network, d.Order.Sequence, d.Order.Note = false, nil, "fell\nback" },
			`nccom-rings: rank 1: its Postset decided rank order ("fell\nback"), but rank 0's the network order [0 1]: the decision comes from the gathered records alone, so the ranks saw different fragments (check the AllGather, or dumps of two runs in one directory)`},
		{"a rank that asked for rank order", 2, func(d *ringdump.Dump) { d.Order.Asked = "rank" },
			"nccom-rings: rank 2 asked NCCOM_RING_NODE_ORDER=rank, but rank 0 network: the network order applies only when every rank asks for it (export it to every rank; docs/node-order.md)"},
		{"a rank whose location is not its node's", 1, func(d *ringdump.Dump) { d.Order.Location = "s/b" },
			`nccom-rings: rank 1: NCCOM_RING_LOCATION is "s/b", but most ranks of its node 0 say "s/a" (set one location per host: nccom-rings locate)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, paths := orderedJob(t)
			edit(t, paths[tc.rank], tc.edit)
			code, out, _ := runTool("verify", dir)
			assert.Equal(t, cli.ExitFinding, code)
			assert.Equal(t, tc.first+"\n", firstLine(out))
		})
	}

	// Rings that do not follow the sequence every rank decided.
	dir, paths := orderedJob(t)
	for _, p := range paths {
		edit(t, p, func(d *ringdump.Dump) { d.Order.Sequence = []int{0, 1, 0} })
	}
	code, out, _ = runTool("verify", dir)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t, "nccom-rings: channel 0: the ring visits the nodes [0 1], not in the sequence [0 1 0] every rank decided (a library that stitched in another order? check each rank's library version)\n", firstLine(out))
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i+1]
		}
	}
	return s
}
