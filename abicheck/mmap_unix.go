//go:build unix

package abicheck

import (
	"os"
	"syscall"
)

// mapFile maps f read-only, so that DWARF sections are read in place: the
// pages come from the page cache, shared by every process that reads the
// same library (every rank of a node), and only the pages the walk touches
// are read at all. nil when the file cannot be mapped (it is then read).
func mapFile(f *os.File) []byte {
	st, err := f.Stat()
	if err != nil || st.Size() <= 0 || st.Size() != int64(int(st.Size())) || !st.Mode().IsRegular() {
		return nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return b
}

func unmapFile(b []byte) {
	if b != nil {
		_ = syscall.Munmap(b)
	}
}
