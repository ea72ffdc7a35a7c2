package layout_test

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/layout"
)

// The table is consistent: within each struct, members lie inside the struct
// and do not overlap, and every struct has a size row.
func TestFieldsFitTheirStructs(t *testing.T) {
	sizes := map[string]int{"ncclTopoSystem": 4}
	for _, s := range layout.Structs {
		sizes[s.Name] = s.Size
	}
	byStruct := map[string][]layout.Field{}
	for _, f := range layout.Fields {
		byStruct[f.Struct] = append(byStruct[f.Struct], f)
	}
	for name, fields := range byStruct {
		size, ok := sizes[name]
		require.True(t, ok, "no size for %s", name)
		sort.Slice(fields, func(i, j int) bool { return fields[i].Offset < fields[j].Offset })
		end := 0
		for _, f := range fields {
			assert.GreaterOrEqual(t, f.Offset, end, "%s.%s overlaps the member before it", name, f.Name)
			end = f.Offset + f.Size
			assert.LessOrEqual(t, end, size, "%s.%s ends past sizeof", name, f.Name)
			assert.NotEmpty(t, f.Grade)
			assert.NotEmpty(t, f.Source)
		}
	}
}

// The spec's derived facts: channels[32] of 512 B end where nKangaRingChannels
// starts; kangaRing[4][64] ends at nMlaInCycle; the stock inter[64] ends at
// crossracktorack (spec §4).
func TestDerivedOffsets(t *testing.T) {
	assert.Equal(t, layout.CommNKangaRingChannels, layout.MaxChannels*layout.ChannelSize)
	assert.Equal(t, layout.CommNMlaInCycle, layout.CommKangaRing+layout.MaxKangaPaths*layout.KangaRingWidth*4)
	assert.Equal(t, layout.TopoGraphInter, layout.TopoGraphIntra+layout.MaxIntra*4)
	assert.Equal(t, layout.TopoGraphCrossRackToRack, layout.TopoGraphInter+layout.MaxInter*4)
	assert.Equal(t, layout.TopoGraphSize, layout.TopoGraphCrossRackToRack+4)
	assert.Equal(t, layout.TopoRanksSize, layout.TopoRanksJbogKangaringPath+layout.MaxKangaPaths*layout.KangaPathWidth*4)
	assert.Equal(t, 8192, layout.MaxIntra)
	assert.Equal(t, 32, layout.MaxChannels)
	assert.Equal(t, 4, layout.PatternRing)
	assert.Equal(t, layout.CommMinSize, layout.CommEnablePod+4)
	assert.Equal(t, 0, layout.CommSize%8)
	assert.GreaterOrEqual(t, layout.CommSize, layout.CommMinSize)
}

func TestAssumedFieldsAreTheOnesD3Names(t *testing.T) {
	var assumed []string
	for _, f := range layout.Fields {
		if f.Grade == layout.Assumed {
			assumed = append(assumed, f.Struct+"."+f.Name)
		}
	}
	assert.ElementsMatch(t, []string{"ncclComm.topo", "ncclComm.rank", "ncclComm.nRanks", "ncclComm.node",
		"ncclComm.nNodes", "ncclComm.nChannels"}, assumed)
}
