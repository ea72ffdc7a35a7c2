package abicheck

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/nccomring/libnccomring/internal/safefile"
)

// openRegular opens path under internal/safefile's rules, following a
// link (the operator names the library): a FIFO at the path is not waited
// on, and only a regular file is accepted. The size is the file's when it
// was opened.
func openRegular(path string) (*os.File, int64, error) {
	f, fi, err := safefile.Open(path, safefile.FollowLinks)
	var notRegular *safefile.NotRegularError
	switch {
	case errors.As(err, &notRegular):
		return nil, 0, &UnusableError{
			What: fmt.Sprintf("%s %v", path, err),
			Hint: "give the path of the libnccom shared object itself",
		}
	case err != nil:
		return nil, 0, openError(path, err)
	}
	return f, fi.Size(), nil
}

// mapFile maps f (of size bytes) read-only, so that DWARF sections are
// read in place: the pages come from the page cache, shared by every
// process that reads the same library (every rank of a node), and only
// the pages the walk touches are read at all. nil when the file cannot be
// mapped (it is then read, within the limits).
func mapFile(f *os.File, size int64) []byte {
	if size <= 0 || size != int64(int(size)) {
		return nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
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

// allocAnon is n bytes of an anonymous private mapping: outside the Go
// heap, so that running out of memory (or of address space under
// RLIMIT_AS) is an error here, not Go's fatal one.
func allocAnon(n int) ([]byte, error) {
	if n == 0 {
		return []byte{}, nil
	}
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
}

func freeAnon(b []byte) {
	if len(b) > 0 {
		_ = syscall.Munmap(b)
	}
}
