package ring

// prefetchFrag asks for the ring lines of the fragment at address p ahead of its
// use (prefetch_amd64.s); last is the byte offset of the last channel's
// entry in each ring array.
//
//go:noescape
func prefetchFrag(p, last uintptr)
