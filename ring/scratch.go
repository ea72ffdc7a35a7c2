package ring

import "sync"

// scratch is the reusable working memory of one call. Calls for different
// communicators run concurrently (D22), so each takes its own from a pool;
// nothing in it outlives the call.
type scratch struct {
	rings  []int32 // rings walked from rank 0, [c*nRanks + i]
	links  []int32 // stitched next and prev, [(r*n + c)*2 + {0, 1}]
	nodeOf []int32 // node index by head rank, -1 where none
	heads  []int32 // each node's channel-0 head rank, in node order
	sink   int32   // keeps scanFragments' look-ahead loads from being dropped
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch  { return scratchPool.Get().(*scratch) }
func putScratch(s *scratch) { scratchPool.Put(s) }

// ints returns (*buf)[:n], growing the buffer when it is too small. The
// contents are not cleared.
func (s *scratch) ints(buf *[]int32, n int) []int32 {
	if cap(*buf) < n {
		*buf = make([]int32, n)
	}
	*buf = (*buf)[:n]
	return *buf
}
