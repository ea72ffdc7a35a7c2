package plan_test

import (
	"os"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/plan"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/ringdump"
)

// d25 is D25's example (docs/spec/DECISIONS.md): 8 hosts of 4 ranks,
// alternating between spine0/leafA and spine0/leafB in rank order.
func d25() plan.Cluster {
	cl := plan.Cluster{RanksPerNode: 4}
	for m := range 8 {
		cl.Hosts = append(cl.Hosts, []string{"trn001", "trn002", "trn003", "trn004", "trn005", "trn006", "trn007", "trn008"}[m])
		cl.Locations = append(cl.Locations, []string{"spine0/leafA", "spine0/leafB"}[m%2])
	}
	return cl
}

func TestDefaultGraphIsRingstages(t *testing.T) {
	// 4 cores, 4 NICs (core i on NIC i): channel 0 runs 0 1 2 3 from core
	// 0 (NIC 0 in, NIC 3 out); channel 1 starts at core 4/8 = 0 and runs
	// backward, 0 3 2 1 (NIC 0 in, NIC 1 out); channel 2 starts at core
	// 1: 1 2 3 0 (NIC 1, NIC 0); channel 7 at core 3 backward: 3 2 1 0.
	g := plan.DefaultGraph(8, 4)
	assert.Equal(t, int32(8), g.NChannels)
	assert.Equal(t, []int32{8, 9, 10, 11, 8, 11, 10, 9, 9, 10, 11, 8}, g.Intra[:12])
	assert.Equal(t, []int32{11, 10, 9, 8}, g.Intra[28:32])
	assert.Equal(t, []int32{0, 3, 0, 1, 1, 0}, g.Inter[:6])
	assert.Equal(t, []int32{3, 0}, g.Inter[14:16])
	assert.Equal(t, int32(-1), g.Inter[16])
}

func TestPlanOfD25sExample(t *testing.T) {
	var dumps []*ringdump.Dump
	res, err := plan.Run(d25(), false, func(d *ringdump.Dump) error { dumps = append(dumps, d); return nil })
	require.NoError(t, err)
	assert.False(t, res.Order.Network)
	assert.Equal(t, 8, res.GraphChannels)
	assert.Equal(t, 16, res.NChannels)
	s, err := score.Compute(res.Job)
	require.NoError(t, err)
	for _, c := range s.Channels {
		assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, c.Sequence, "channel %d", c.Channel)
		assert.Equal(t, 8, c.Levels[1].Crossings, "channel %d", c.Channel)
	}
	require.Len(t, dumps, 32)
	assert.Equal(t, 5, dumps[5].Rank)
	assert.Equal(t, 1, dumps[5].Node)
	assert.Equal(t, "trn002", dumps[5].Host)
	// The record's hashes (FNV-1a of "spine0" and "leafB", computed
	// apart), with the name that hashes to them (D28).
	assert.Equal(t, &ringdump.Order{Asked: "rank", Location: "spine0/leafB", LocationHashes: []uint32{0x91af974c, 0x5b9adb35}, FromRecord: true}, dumps[5].Order)

	res, err = plan.Run(d25(), true, nil)
	require.NoError(t, err)
	assert.True(t, res.Order.Network)
	assert.Equal(t, []int32{0, 2, 4, 6, 1, 3, 5, 7}, res.Order.Sequence)
	s, err = score.Compute(res.Job)
	require.NoError(t, err)
	for _, c := range s.Channels {
		assert.Equal(t, 2, c.Levels[1].Crossings, "channel %d", c.Channel)
		assert.Equal(t, 0, c.Levels[0].Crossings, "one spine")
	}
	// Channel 0 (cores 0..3, NIC 0 in, NIC 3 out): every inter-node edge
	// leaves a node's core 3 on NIC index 3 and enters core 0 on NIC
	// index 0.
	assert.Equal(t, 8, s.Channels[0].NICMismatches)
	assert.Equal(t, score.Mismatch{Channel: 0, From: 3, To: 8, FromDev: 3, ToDev: 0}, s.Mismatches[0])

	order, err := plan.NetworkOrder(d25().Locations)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 4, 6, 1, 3, 5, 7}, order)
}

func TestPlanRefuses(t *testing.T) {
	cl := d25()
	cl.RanksPerNode = 0
	_, err := plan.Run(cl, false, nil)
	assert.EqualError(t, err, "0 ranks a node: outside [1, 256]")
	cl.RanksPerNode = 513
	_, err = plan.Run(cl, false, nil)
	assert.EqualError(t, err, "513 ranks a node: outside [1, 256]")
	cl = d25()
	cl.RanksPerNode = 256
	cl.Hosts = append(cl.Hosts, cl.Hosts...)
	cl.Hosts = append(cl.Hosts, "x")
	cl.Locations = make([]string, len(cl.Hosts))
	_, err = plan.Run(cl, false, nil)
	assert.EqualError(t, err, "17 hosts x 256 ranks = 4352 ranks: more than the 4096 a plan runs")
}

func TestHostfileReadLocateAndEmit(t *testing.T) {
	path := t.TempDir() + "/hosts"
	require.NoError(t, os.WriteFile(path, []byte("# launch order\nb1 slots=4\n\n  a1:4  # MPICH\r\nC1\n"), 0o644))
	hosts, err := plan.ReadHostfile(path)
	require.NoError(t, err)
	assert.Equal(t, []plan.Host{{Name: "b1", Line: 2, Text: "b1 slots=4", Slots: 4}, {Name: "a1", Line: 4, Text: "  a1:4  # MPICH", Slots: 4}, {Name: "C1", Line: 5, Text: "C1"}}, hosts)

	locs, missing := plan.Locate(hosts, []location.Entry{{Host: "c1.ec2.internal", Location: "s/l1"}, {Host: "B1", Location: "s/l2"}})
	assert.Equal(t, []string{"s/l2", "", "s/l1"}, locs)
	assert.Equal(t, []int{1}, missing)

	order, err := plan.NetworkOrder(locs)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 1}, order, "b1 and C1 (one spine, two leaves, in their order), a1 without a location last")
	assert.Equal(t, "# the hosts of \""+path+"\" in D25's network order (nccom-rings plan --emit-hostfile):\n"+
		"# rank order of a launcher that keeps this order follows the network\n"+
		"b1 slots=4\nC1\n  a1:4  # MPICH\n", string(plan.EmitHostfile(path, hosts, order)))

	require.NoError(t, os.WriteFile(path, []byte("a\nb\nA.x\n"), 0o644))
	_, err = plan.ReadHostfile(path)
	assert.EqualError(t, err, path+":3:1: host \"A.x\" again; first on line 1")
	require.NoError(t, os.WriteFile(path, []byte("# none\n"), 0o644))
	_, err = plan.ReadHostfile(path)
	assert.EqualError(t, err, path+": no host in the file")
}

// Slot counts: OpenMPI's slots=N anywhere after the host, MPICH's host:N;
// not a count (0) when it is not digits or outside [1, 4096]. CommonSlots
// needs every host to give the same one; OtherSlots counts the hosts whose
// count is not the plan's, from the first.
func TestHostfileSlots(t *testing.T) {
	path := t.TempDir() + "/hosts"
	require.NoError(t, os.WriteFile(path, []byte("a slots=8 max_slots=16\nb:8\nc max_slots=4 slots=8\nd\ne max_slots=2\nf # slots=2\ng slots=4096\nh:00000007\n"), 0o644))
	hosts, err := plan.ReadHostfile(path)
	require.NoError(t, err)
	var slots []int
	for _, h := range hosts {
		slots = append(slots, h.Slots)
	}
	assert.Equal(t, []int{8, 8, 8, 0, 0, 0, 4096, 7}, slots)

	// A count given but not one is refused, naming it.
	for text, want := range map[string]string{
		"a\nd  slots=x\n":                `:2:4: "slots=x": the slot count is not a number in [1, 4096]`,
		"e:0\n":                          `:1:1: "e:0": the slot count is not a number in [1, 4096]`,
		"f slots=4097\n":                 `:1:3: "slots=4097": the slot count is not a number in [1, 4096]`,
		"g slots=\n":                     `:1:3: "slots=": the slot count is not a number in [1, 4096]`,
		"h slots=+8\n":                   `:1:3: "slots=+8": the slot count is not a number in [1, 4096]`,
		"i slots=99999999999999999999\n": `:1:3: "slots=99999999999999999999": the slot count is not a number in [1, 4096]`,
	} {
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		_, err := plan.ReadHostfile(path)
		assert.EqualError(t, err, path+want, text)
	}
	require.NoError(t, os.WriteFile(path, []byte("a slots=8 max_slots=16\nb:8\nc max_slots=4 slots=8\nd\ne max_slots=2\nf # slots=2\ng slots=4096\nh:007\n"), 0o644))
	hosts, err = plan.ReadHostfile(path)
	require.NoError(t, err)

	n, ok := plan.CommonSlots(hosts[:3])
	assert.True(t, ok)
	assert.Equal(t, 8, n)
	_, ok = plan.CommonSlots(hosts[:4]) // d gives none
	assert.False(t, ok)
	_, ok = plan.CommonSlots([]plan.Host{hosts[0], hosts[6]}) // 8 and 4096
	assert.False(t, ok)
	_, ok = plan.CommonSlots(nil)
	assert.False(t, ok)

	first, count := plan.OtherSlots(hosts, 8) // g (4096) and h (7); d, e, f give none
	assert.Equal(t, [2]int{6, 2}, [2]int{first, count})
	first, count = plan.OtherSlots(hosts[:6], 8)
	assert.Equal(t, [2]int{-1, 0}, [2]int{first, count})
}
