//go:build unix

package abicheck

import (
	"fmt"
	"os"
	"syscall"
)

// openRegular opens path for reading without blocking (a FIFO at the
// path would block an ordinary open until a writer came) and accepts
// regular files only. The size is the file's when it was opened.
func openRegular(path string) (*os.File, int64, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, openError(path, &os.PathError{Op: "open", Path: path, Err: err})
	}
	f := os.NewFile(uintptr(fd), path)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, openError(path, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, &UnusableError{
			What: fmt.Sprintf("%s is not a regular file (%s)", path, fileKind(st.Mode())),
			Hint: "give the path of the libnccom shared object itself",
		}
	}
	return f, st.Size(), nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
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
