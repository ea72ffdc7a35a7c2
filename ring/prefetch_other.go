//go:build !amd64

package ring

// prefetchFrag is a no-op where there is no prefetch instruction in
// prefetch_*.s: the walk then takes each fragment's misses as it meets them.
func prefetchFrag(p, last uintptr) {}
