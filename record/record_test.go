package record_test

import (
	"encoding/binary"
	"hash/fnv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/record"
)

func fragmentBytes(f *abi.TopoRanks) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(f)), unsafe.Sizeof(*f))
}

// fnvOfWords is the standard library's FNV-1a over the words' little-endian
// bytes: an implementation independent of the package's.
func fnvOfWords(words ...uint32) uint32 {
	h := fnv.New32a()
	var b [4]byte
	for _, w := range words {
		binary.LittleEndian.PutUint32(b[:], w)
		h.Write(b[:])
	}
	return h.Sum32()
}

func TestWriteLaysOutTheRecordAsTheHeaderSays(t *testing.T) {
	var frag abi.TopoRanks
	b := fragmentBytes(&frag)
	for i := range b {
		b[i] = 0xA5
	}
	loc, err := nodeorder.Parse("spine0/leafA")
	require.NoError(t, err)
	record.Write(&frag, &record.Fields{Rank: 5, Network: true, SwitchV1: true, Location: loc, Fingerprint: 0x01020304, JbogID: 2, VirtualCore: 0})

	rec := b[832:896]
	word := func(i int) uint32 { return binary.LittleEndian.Uint32(rec[4*i:]) }
	assert.Equal(t, []byte{0xCE, 0x11, 0x5A, 0xD2}, rec[:4], "magic 0xD25A11CE at +832")
	assert.Equal(t, uint32(1), word(1), "version")
	assert.Equal(t, uint32(5), word(2), "rank")
	assert.Equal(t, uint32(2<<8|0x4|0x1), word(3), "flags: 2 levels, SwitchV1, network")
	assert.Equal(t, uint32(0x01020304), word(4), "fingerprint")
	assert.Equal(t, uint32(2), word(5), "JBOG id")
	assert.Equal(t, uint32(0), word(6), "virtual core size")
	assert.Equal(t, fnvOfWords(0xD25A11CE, 1, 5, 0x205, 0x01020304, 2, 0, 0, nodeorder.Hash("spine0"), nodeorder.Hash("leafA"), 0, 0, 0, 0, 0, 0),
		word(7), "checksum")
	assert.Equal(t, nodeorder.Hash("spine0"), word(8))
	assert.Equal(t, nodeorder.Hash("leafA"), word(9))
	for i := 10; i < 16; i++ {
		assert.Zero(t, word(i), "unused location word %d", i)
	}
	for i, v := range b {
		if i < 832 || i >= 896 {
			require.Equal(t, byte(0xA5), v, "byte %d outside the record", i)
		}
	}
	got, ok := record.Read(&frag, 5)
	require.True(t, ok)
	assert.Equal(t, record.Fields{Rank: 5, Network: true, SwitchV1: true, Location: loc, Fingerprint: 0x01020304, JbogID: 2}, got)
}

func TestAnEmptyRecordIsItsFirstWordAlone(t *testing.T) {
	for _, f := range []*record.Fields{nil, {Rank: 3}, {Rank: 3, Fingerprint: 7, JbogID: 1}} {
		var frag abi.TopoRanks
		b := fragmentBytes(&frag)
		for i := range b {
			b[i] = 0x77
		}
		record.Write(&frag, f)
		for i, v := range b {
			want := byte(0x77)
			if i >= 832 && i < 836 {
				want = 0
			}
			require.Equal(t, want, v, "byte %d", i)
		}
		_, ok := record.Read(&frag, 3)
		assert.False(t, ok)
	}
}

func TestReadRefusesRecordsThatAreNotValid(t *testing.T) {
	loc, err := nodeorder.Parse("a/b/c")
	require.NoError(t, err)
	valid := func() *abi.TopoRanks {
		frag := new(abi.TopoRanks)
		record.Write(frag, &record.Fields{Rank: 9, PodNode: true, Location: loc, Fingerprint: 42})
		return frag
	}
	_, ok := record.Read(valid(), 9)
	require.True(t, ok)
	for _, tc := range []struct {
		name    string
		breakIt func(r *abi.Record)
		redo    bool // the checksum computed again over the broken record
	}{
		{"another magic", func(r *abi.Record) { r.Magic = -1 }, true},
		{"another version", func(r *abi.Record) { r.Version = 2 }, true},
		{"a flipped bit", func(r *abi.Record) { r.Location[1] ^= 1 }, false},
		{"another checksum", func(r *abi.Record) { r.Checksum++ }, false},
		{"9 levels", func(r *abi.Record) { r.Flags = 9<<8 | r.Flags&0xff }, true},
		{"negative levels", func(r *abi.Record) { r.Flags = -1 << 8 }, true},
		{"an unknown flag", func(r *abi.Record) { r.Flags |= 0x10 }, true},
		{"a hash past the levels", func(r *abi.Record) { r.Location[5] = 1 }, true},
		{"another rank's", func(r *abi.Record) { r.Rank = 8 }, true},
	} {
		frag := valid()
		r := record.Of(frag)
		tc.breakIt(r)
		if tc.redo {
			r.Checksum = fnvOfWords(uint32(r.Magic), uint32(r.Version), uint32(r.Rank), uint32(r.Flags), r.Fingerprint,
				uint32(r.JbogID), uint32(r.VirtualCoreSize), 0, r.Location[0], r.Location[1], r.Location[2], r.Location[3],
				r.Location[4], r.Location[5], r.Location[6], r.Location[7])
		}
		_, ok := record.Read(frag, 9)
		assert.False(t, ok, tc.name)
	}
}

func TestFingerprint(t *testing.T) {
	g := &abi.TopoGraph{NChannels: 3}
	copy(g.Inter[:], []int32{4, 5, 6, 7, 8, 9, 99})
	assert.Equal(t, fnvOfWords(3, 4, 5, 6, 7, 8, 9), record.Fingerprint(g), "nChannels and inter[0..6), not inter[6]")
	other := *g
	other.Inter[5] = 10
	assert.NotEqual(t, record.Fingerprint(g), record.Fingerprint(&other))
	other = *g
	other.Inter[6] = 10 // past the graph's channels
	assert.Equal(t, record.Fingerprint(g), record.Fingerprint(&other))
	big := &abi.TopoGraph{NChannels: 40}
	assert.Equal(t, fnvOfWords(append([]uint32{40}, make([]uint32, 64)...)...), record.Fingerprint(big), "capped at inter's 64 entries")
	neg := &abi.TopoGraph{NChannels: -2}
	assert.Equal(t, fnvOfWords(0xfffffffe), record.Fingerprint(neg))
}

// Each field alone makes a record (Carries is an "or" of the four), and
// Read gives back exactly what was written: every flag on its own, so a
// flag read as set when it is not shows; no location (0 levels) and the
// most levels, 8, are both valid.
func TestEveryFieldAloneRoundTrips(t *testing.T) {
	eight, err := nodeorder.Parse("a/b/c/d/e/f/g/h")
	require.NoError(t, err)
	require.EqualValues(t, 8, eight.Levels)
	one, err := nodeorder.Parse("leaf")
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		f     record.Fields
		flags uint32 // word 3 as the header lays it out
	}{
		{"network only", record.Fields{Rank: 2, Network: true}, 0x1},
		{"pod order only", record.Fields{Rank: 2, PodNode: true}, 0x2},
		{"SwitchV1 only", record.Fields{Rank: 2, SwitchV1: true, JbogID: 3, VirtualCore: 1}, 0x4},
		{"a location of 1 level only", record.Fields{Rank: 2, Location: one}, 1 << 8},
		{"a location of 8 levels only", record.Fields{Rank: 2, Location: eight}, 8 << 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var frag abi.TopoRanks
			record.Write(&frag, &tc.f)
			b := fragmentBytes(&frag)
			assert.Equal(t, []byte{0xCE, 0x11, 0x5A, 0xD2}, b[832:836], "written: the magic")
			assert.Equal(t, tc.flags, binary.LittleEndian.Uint32(b[832+12:]), "flags")
			got, ok := record.Read(&frag, 2)
			require.True(t, ok)
			assert.Equal(t, tc.f, got)
		})
	}
}

// AsksNetwork is the magic and the network-order flag alone: true for a
// record that asks, also when it is not valid (Read refuses it), false
// for one that does not ask, one without the magic and a fragment that
// carries nothing.
func TestAsksNetworkIsTheMagicAndTheFlagAlone(t *testing.T) {
	asking := new(abi.TopoRanks)
	record.Write(asking, &record.Fields{Rank: 3, Network: true})
	assert.True(t, record.AsksNetwork(asking))
	record.Of(asking).Checksum++
	_, ok := record.Read(asking, 3)
	require.False(t, ok)
	assert.True(t, record.AsksNetwork(asking), "not valid, still asking")
	record.Of(asking).Magic = -1
	assert.False(t, record.AsksNetwork(asking), "no magic")

	located := new(abi.TopoRanks)
	loc, err := nodeorder.Parse("a/b")
	require.NoError(t, err)
	record.Write(located, &record.Fields{Rank: 3, Location: loc, PodNode: true})
	assert.False(t, record.AsksNetwork(located))
	record.Write(located, nil)
	assert.False(t, record.AsksNetwork(located))
}
