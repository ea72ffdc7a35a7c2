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
