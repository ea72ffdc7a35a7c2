package kanga_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
)

func TestParseEnv(t *testing.T) {
	for _, tc := range []struct {
		value string
		set   bool
		want  kanga.Platform
		err   string
	}{
		{"", false, kanga.Generic, ""},
		{"", true, kanga.Generic, ""},
		{"generic", true, kanga.Generic, ""},
		{"trn3-switchv1", true, kanga.Platform{SwitchV1: true, VirtualCoreSize: 0, JbogID: 1}, ""},
		{"TRN3-SwitchV1", true, kanga.SwitchV1, ""},
		{"trn2", true, kanga.Generic, "NCCOM_RING_PLATFORM=\"trn2\" is not one of generic, trn3-switchv1"},
		{" generic", true, kanga.Generic, "NCCOM_RING_PLATFORM=\" generic\" is not one of generic, trn3-switchv1"},
	} {
		got, err := kanga.ParseEnv(tc.value, tc.set)
		assert.Equal(t, tc.want, got, "%q", tc.value)
		if tc.err == "" {
			assert.NoError(t, err, "%q", tc.value)
			continue
		}
		var unknown *kanga.UnknownPlatformError
		require.ErrorAs(t, err, &unknown)
		assert.EqualError(t, err, tc.err)
	}
}

func TestCheckChannelCount(t *testing.T) {
	for n := int32(0); n <= 4; n++ {
		assert.NoError(t, kanga.CheckChannelCount("f", n))
	}
	err := kanga.CheckChannelCount("ncclTopoPreset", 5)
	var e *abi.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, abi.InvalidArgument, e.Code)
	assert.Equal(t, "ncclTopoPreset: comm->nKangaRingChannels 5 is outside [0, 4]", e.Text)
	assert.EqualError(t, kanga.CheckChannelCount("g", -1), "g: comm->nKangaRingChannels -1 is outside [0, 4]")
}

func kangaComm(n int32) *abi.Comm {
	c := new(abi.Comm)
	c.NKangaRingChannels = n
	for k := range c.KangaRing {
		for i := range c.KangaRing[k] {
			c.KangaRing[k][i] = int32(1000*k + i)
		}
	}
	return c
}

func TestLiftCopiesFirstFourIntsPerPath(t *testing.T) {
	c := kangaComm(3)
	var frag abi.TopoRanks
	kanga.Lift(c, &frag, true)
	assert.Equal(t, [4][4]int32{{0, 1, 2, 3}, {1000, 1001, 1002, 1003}, {2000, 2001, 2002, 2003}, {}}, frag.JbogKangaringPath)

	var untouched abi.TopoRanks
	kanga.Lift(c, &untouched, false)
	assert.Zero(t, untouched, "not SwitchV1: nothing is lifted (D7)")
}

func TestMaterializeAssemblesSixteenFragments(t *testing.T) {
	c := kangaComm(2)
	all := make([]*abi.TopoRanks, 20)
	for v := range all {
		all[v] = new(abi.TopoRanks)
		for k := range 4 {
			for i := range 4 {
				all[v].JbogKangaringPath[k][i] = int32(100*v + 10*k + i)
			}
		}
	}
	n := kanga.Materialize(c, all, true, c.NKangaRingChannels)
	assert.Equal(t, 64, n)
	for k := range 2 {
		for v := range 16 {
			for i := range 4 {
				assert.EqualValues(t, 100*v+10*k+i, c.KangaRing[k][4*v+i], "k %d v %d i %d", k, v, i)
			}
		}
	}
	assert.EqualValues(t, 2000, c.KangaRing[2][0], "path 2 is past nKangaRingChannels: untouched")

	few := kangaComm(1)
	assert.Equal(t, 12, kanga.Materialize(few, all[:3], true, few.NKangaRingChannels), "min(16, nRanks) fragments (D13)")
	assert.EqualValues(t, 201, few.KangaRing[0][9])
	assert.EqualValues(t, 12, few.KangaRing[0][12], "past 3 ranks: untouched")

	generic := kangaComm(2)
	assert.Zero(t, kanga.Materialize(generic, all, false, generic.NKangaRingChannels))
	assert.Equal(t, kangaComm(2).KangaRing, generic.KangaRing)
}

// gateSpy is a Resolver that records whether its preconditions were asked.
type gateSpy struct {
	kanga.Fixed
	asked int
}

func (g *gateSpy) Preconditions(rank int32) (int32, int32) {
	g.asked++
	return g.Fixed.Preconditions(rank)
}

func TestCheckPreconditions(t *testing.T) {
	for j := int32(1); j <= 3; j++ {
		assert.NoError(t, kanga.CheckPreconditions(0, 0, j))
	}
	for _, tc := range []struct {
		rank, vcore, jbog int32
		text              string
	}{
		{5, 2, 1, "ncclTopoPostset: kangaRing precondition failed: virtual core size of rank 5 is 2, expected 0"},
		{6, -1, 0, "ncclTopoPostset: kangaRing precondition failed: virtual core size of rank 6 is -1, expected 0"},
		{5, 0, 4, "ncclTopoPostset: kangaRing precondition failed: JBOG id of rank 5 is 4, expected 1, 2 or 3"},
		{7, 0, 0, "ncclTopoPostset: kangaRing precondition failed: JBOG id of rank 7 is 0, expected 1, 2 or 3"},
	} {
		assert.EqualError(t, kanga.CheckPreconditions(tc.rank, tc.vcore, tc.jbog), tc.text)
	}
}

func TestPathLines(t *testing.T) {
	c := kangaComm(2)
	assert.Equal(t, []string{"built 2 kangaring paths", "kangaring path[0]=0 1 2 3", "kangaring path[1]=1000 1001 1002 1003"},
		kanga.PathLines(c, c.NKangaRingChannels, 4))
	assert.Equal(t, []string{"built 0 kangaring paths"}, kanga.PathLines(kangaComm(0), 0, 64))
}
