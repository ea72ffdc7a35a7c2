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

// checksumOf is the header's version-2 checksum, written from its text:
// four lanes of FNV-1a's arithmetic on whole words (lane k takes words k,
// k+4, k+8, k+12), folded in lane order.
func checksumOf(words [16]uint32) uint32 {
	const prime = 16777619
	words[7] = 0
	var lanes [4]uint32
	for k := range lanes {
		lanes[k] = 2166136261
		for i := k; i < 16; i += 4 {
			lanes[k] = (lanes[k] ^ words[i]) * prime
		}
	}
	h := lanes[0] * prime
	h = (h ^ lanes[1]) * prime
	h = (h ^ lanes[2]) * prime
	return (h ^ lanes[3]) * prime
}

// wordsOf is the record's 16 words as the fragment's bytes hold them.
func wordsOf(f *abi.TopoRanks) (w [16]uint32) {
	b := fragmentBytes(f)[832:896]
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

func TestWriteLaysOutTheRecordAsTheHeaderSays(t *testing.T) {
	var frag abi.TopoRanks
	b := fragmentBytes(&frag)
	for i := range b {
		b[i] = 0xA5
	}
	loc, err := nodeorder.Parse("spine0/leafA")
	require.NoError(t, err)
	fields := record.Fields{Rank: 5, Network: true, Platform: record.SwitchV1, EnablePod: true, KangaChannels: 3, GraphChannels: 17,
		Location: loc, Fingerprint: 0x01020304, JbogID: 2, VirtualCore: 0}
	record.Write(&frag, &fields)

	rec := b[832:896]
	word := func(i int) uint32 { return binary.LittleEndian.Uint32(rec[4*i:]) }
	assert.Equal(t, []byte{0xCE, 0x11, 0x5A, 0xD2}, rec[:4], "magic 0xD25A11CE at +832")
	assert.Equal(t, uint32(2), word(1), "version")
	assert.Equal(t, uint32(5), word(2), "rank")
	assert.Equal(t, uint32(17<<16|3<<12|2<<8|0x10|0x4|0x1), word(3), "flags: 17 channels, 3 kangaRing paths, 2 levels, enablePod, SwitchV1, network")
	assert.Equal(t, uint32(0x01020304), word(4), "fingerprint")
	assert.Equal(t, uint32(2), word(5), "JBOG id")
	assert.Equal(t, uint32(0), word(6), "virtual core size")
	assert.Equal(t, checksumOf(wordsOf(&frag)), word(7), "checksum")
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
	assert.Equal(t, fields, got)
}

// The checksum, against a hand computation for a record of known words:
// the lanes fold every word, so each word changes it.
func TestChecksumTakesEveryWord(t *testing.T) {
	var frag abi.TopoRanks
	record.Write(&frag, &record.Fields{Rank: 1, GraphChannels: 1})
	w := wordsOf(&frag)
	assert.Equal(t, [16]uint32{0xD25A11CE, 2, 1, 1 << 16, 0, 0, 0, w[7]}, w)
	assert.Equal(t, checksumOf(w), w[7])
	for i := range 16 {
		if i == 7 {
			continue
		}
		v := w
		v[i] ^= 0x80000000
		assert.NotEqual(t, checksumOf(w), checksumOf(v), "word %d", i)
	}
}

func TestCheckClassifiesRecords(t *testing.T) {
	loc, err := nodeorder.Parse("a/b/c")
	require.NoError(t, err)
	valid := func() *abi.TopoRanks {
		frag := new(abi.TopoRanks)
		record.Write(frag, &record.Fields{Rank: 9, PodNode: true, Location: loc, Fingerprint: 42, GraphChannels: 4})
		return frag
	}
	k, version := record.Check(valid(), 9)
	require.Equal(t, record.Valid, k)
	require.EqualValues(t, 2, version)
	resum := func(r *abi.Record) {
		f := (*abi.TopoRanks)(unsafe.Add(unsafe.Pointer(r), -abi.RecordOffset))
		r.Checksum = checksumOf(wordsOf(f))
	}
	for _, tc := range []struct {
		name    string
		breakIt func(r *abi.Record)
		redo    bool // the checksum computed again over the broken record
		kind    record.Kind
		version int32
	}{
		{"another magic", func(r *abi.Record) { r.Magic = -1 }, true, record.None, -1},
		{"no magic: zeros", func(r *abi.Record) { *r = abi.Record{} }, false, record.None, -1},
		{"version 3, its checksum whole", func(r *abi.Record) { r.Version = 3 }, true, record.Unreadable, 3},
		{"a flipped bit", func(r *abi.Record) { r.Location[1] ^= 1 }, false, record.Unreadable, -1},
		{"another checksum", func(r *abi.Record) { r.Checksum++ }, false, record.Unreadable, -1},
		{"9 levels", func(r *abi.Record) { r.Flags = r.Flags&^(0xf<<8) | 9<<8 }, true, record.Unreadable, -1},
		{"5 kangaRing paths", func(r *abi.Record) { r.Flags |= 5 << 12 }, true, record.Unreadable, -1},
		{"0 channels", func(r *abi.Record) { r.Flags &^= 0x3f << 16 }, true, record.Unreadable, -1},
		{"33 channels", func(r *abi.Record) { r.Flags = r.Flags&^(0x3f<<16) | 33<<16 }, true, record.Unreadable, -1},
		{"SwitchV1 and unknown", func(r *abi.Record) { r.Flags |= 0xc }, true, record.Unreadable, -1},
		{"an unknown flag", func(r *abi.Record) { r.Flags |= 0x20 }, true, record.Unreadable, -1},
		{"a high flag", func(r *abi.Record) { r.Flags |= 1 << 22 }, true, record.Unreadable, -1},
		{"a hash past the levels", func(r *abi.Record) { r.Location[5] = 1 }, true, record.Unreadable, -1},
		{"another rank's", func(r *abi.Record) { r.Rank = 8 }, true, record.Unreadable, -1},
	} {
		frag := valid()
		r := record.Of(frag)
		tc.breakIt(r)
		if tc.redo {
			resum(r)
		}
		k, version := record.Check(frag, 9)
		assert.Equal(t, tc.kind, k, tc.name)
		assert.Equal(t, tc.version, version, tc.name)
		_, ok := record.Read(frag, 9)
		assert.False(t, ok, tc.name)
	}

	// A version-1 record (its checksum FNV-1a over the 64 bytes) is named
	// as one (D28).
	v1 := valid()
	r := record.Of(v1)
	r.Version = 1
	r.Checksum = fnvOfWords(uint32(r.Magic), uint32(r.Version), uint32(r.Rank), uint32(r.Flags), r.Fingerprint,
		uint32(r.JbogID), uint32(r.VirtualCoreSize), 0, r.Location[0], r.Location[1], r.Location[2], r.Location[3],
		r.Location[4], r.Location[5], r.Location[6], r.Location[7])
	k, version = record.Check(v1, 9)
	assert.Equal(t, record.Unreadable, k)
	assert.EqualValues(t, 1, version)
	r.Checksum++
	_, version = record.Check(v1, 9)
	assert.EqualValues(t, -1, version, "damaged: no version to quote")
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

// Each field alone round-trips: Read gives back exactly what was written,
// every flag on its own, so a flag read as set when it is not shows; no
// location (0 levels) and the most levels, 8, are both valid.
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
		{"nothing but the channel count", record.Fields{Rank: 2, GraphChannels: 1}, 1 << 16},
		{"32 channels", record.Fields{Rank: 2, GraphChannels: 32}, 32 << 16},
		{"network", record.Fields{Rank: 2, Network: true, GraphChannels: 1}, 1<<16 | 0x1},
		{"pod order", record.Fields{Rank: 2, PodNode: true, GraphChannels: 1}, 1<<16 | 0x2},
		{"SwitchV1", record.Fields{Rank: 2, Platform: record.SwitchV1, JbogID: 3, VirtualCore: 1, GraphChannels: 1}, 1<<16 | 0x4},
		{"an unknown platform", record.Fields{Rank: 2, Platform: record.Unknown, GraphChannels: 1}, 1<<16 | 0x8},
		{"enablePod", record.Fields{Rank: 2, EnablePod: true, GraphChannels: 1}, 1<<16 | 0x10},
		{"4 kangaRing paths", record.Fields{Rank: 2, KangaChannels: 4, GraphChannels: 1}, 1<<16 | 4<<12},
		{"a location of 1 level", record.Fields{Rank: 2, Location: one, GraphChannels: 1}, 1<<16 | 1<<8},
		{"a location of 8 levels", record.Fields{Rank: 2, Location: eight, GraphChannels: 1}, 1<<16 | 8<<8},
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

func TestPlatformNames(t *testing.T) {
	assert.Equal(t, []string{"generic", "trn3-switchv1", "unknown"},
		[]string{record.Generic.String(), record.SwitchV1.String(), record.Unknown.String()})
}
