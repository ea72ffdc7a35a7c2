package ring_test

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/ring"
)

// D20 in Go: a caller's userRanks buffer that is not writable faults in
// Postset's probe, before any write, and the export layer turns the fault
// into a WARN (debug.SetPanicOnFault, as here). The fixture's 2 channels
// double to 4: channel 0 is a buffer of the caller's, channel 1 a page
// mapped PROT_NONE, channels 2 and 3 are NULL. Channel 0 is not written
// (the walk writes it first), the buffers Postset had allocated for 2 and
// 3 are freed again, and nothing else changes.
func TestPostsetFaultingUserRanksWritesNothingAndFreesWhatItAllocated(t *testing.T) {
	page, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_NONE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer func() { require.NoError(t, syscall.Munmap(page)) }()
	bad := uintptr(unsafe.Pointer(&page[0]))

	f := newPostsetFixture(t)
	own := []int32{-5, -5, -5, -5, -5, -5, -5, -5}
	f.comm.Channels[0].Ring.UserRanks = abi.Address(own)
	f.comm.Channels[1].Ring.UserRanks = bad
	before := bytes.Clone(bytesOf(f.comm))
	heads := []int32{-5, -5, -5, -5, -5, -5, -5, -5}
	alloc := newGoAlloc()
	recovered := func() (r any) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { r = recover() }()
		_, _ = ring.Postset(f.comm, heads, f.all, ring.PostsetOptions{Platforms: generic, Alloc: alloc})
		return nil
	}()
	fault, ok := recovered.(interface{ Addr() uintptr })
	require.True(t, ok, "Postset did not fault: %v", recovered)
	assert.Equal(t, bad, fault.Addr(), "the fault is the probe of channel 1's first int")
	assert.Equal(t, 2, alloc.calls, "channels 2 and 3 were allocated")
	assert.Empty(t, alloc.live, "what Postset allocated is freed")
	assert.Equal(t, []int32{-5, -5, -5, -5, -5, -5, -5, -5}, own, "channel 0's userRanks written")
	assert.Equal(t, before, bytesOf(f.comm), "comm changed")
	assert.Equal(t, []int32{-5, -5, -5, -5, -5, -5, -5, -5}, heads, "nodesFirstRank changed")
	runtime.KeepAlive(own)
}

// D25: when no rank asks for the network order, Postset reads of each
// record only its magic and its flags (gather counts the records that
// ask). Reading and checksumming every record of a job whose ranks carry
// a location without asking cost about as much as the rest of Postset at
// 65,536 ranks (BenchmarkPostsetLocated). Here rank 5's fragment lies so
// that its record from the fingerprint on is a page mapped PROT_NONE:
// every rank's Postset must give the outcome it gives on the plain
// fragments, without a fault.
func TestPostsetReadsNoRecordWhenNoneAsks(t *testing.T) {
	j := orderJob(t, orderCluster(4), noRank, alternating)
	want := oneVerdict(t, postsetEveryRank(t, j))
	require.False(t, want.order.Asked)
	require.Equal(t, 4, want.nNodes)

	pages, err := syscall.Mmap(-1, 0, 2*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer func() { require.NoError(t, syscall.Munmap(pages)) }()
	const readable = abi.RecordOffset + 16 // magic, version, rank, flags
	moved := (*abi.TopoRanks)(unsafe.Pointer(&pages[4096-readable]))
	*moved = j.fragments[5]
	require.NoError(t, syscall.Mprotect(pages[4096:], syscall.PROT_NONE))
	for r := range j.fragments {
		j.all = append(j.all, &j.fragments[r])
	}
	j.all[5] = moved

	got, fault := func() (out []outcome, fault any) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { fault = recover() }()
		return postsetEveryRank(t, j), nil
	}()
	require.Nil(t, fault, "Postset read rank 5's record past its flags")
	assert.Equal(t, want, oneVerdict(t, got))
}
