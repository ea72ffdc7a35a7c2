//go:build unix

// Package safefile opens, reads and writes the files another user could
// control (docs/security.md): a dump, a layout profile, a locations file,
// an instance's asset tag, a libnccom handed to the tools, and the files
// the tools write where they are told (which may lie in a directory
// another user can write into). It is the one place the rules live:
//
//   - the open never waits (O_NONBLOCK: a FIFO would block an ordinary
//     open until a writer came) and never takes a terminal (O_NOCTTY);
//   - a symbolic link at the path's last component is refused unless the
//     caller follows links (O_NOFOLLOW), as for a path in a shared
//     directory;
//   - only a regular file is read, checked on the open file (fstat), so a
//     file swapped in after the check is not the one read;
//   - never more than the caller's bound is read, even from a file that
//     grows while it is read;
//   - a file is written (WriteFile, WriteAt) into a new file under a
//     random name beside it, created exclusively, then renamed over its
//     name: a link there is replaced, never written through, and nothing
//     opened for writing can be a FIFO another user left (which would
//     block the open) or a file they linked from elsewhere; WriteFile,
//     for a path the operator gave, refuses what is neither a regular
//     file nor a link there instead of replacing it.
//
// The errors are ErrLink, *NotRegularError and *TooBigError, whose texts
// begin with "is" so that a caller can put the path before them; or the
// open's own *fs.PathError.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Follow says whether a symbolic link at the path is followed: yes for a
// path the operator typed, no for one in a directory another user can
// write.
type Follow bool

const (
	NoLinks     Follow = false
	FollowLinks Follow = true
)

// ErrLink is a symbolic link at a path opened with NoLinks.
var ErrLink = errors.New("is a symbolic link, not a regular file")

// NotRegularError is a path that names something other than a regular
// file.
type NotRegularError struct{ Mode fs.FileMode }

func (e *NotRegularError) Error() string { return "is " + Kind(e.Mode) + ", not a regular file" }

// TooBigError is a file of more than Max bytes: Size bytes when it was
// opened, or -1 when it grew past Max while it was read.
type TooBigError struct{ Size, Max int64 }

func (e *TooBigError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("grew past %d bytes while it was read", e.Max)
	}
	return fmt.Sprintf("is %d bytes, more than %d", e.Size, e.Max)
}

// Open opens path for reading under the rules above and returns the file
// and what fstat said of it (a regular file). The caller closes it.
func Open(path string, follow Follow) (*os.File, fs.FileInfo, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
	if follow == NoLinks {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		if follow == NoLinks && errors.Is(err, syscall.ELOOP) {
			return nil, nil, ErrLink
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{fi.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadAll reads f, whose size when it was opened is fi's, to its end:
// at most max bytes.
func ReadAll(f *os.File, fi fs.FileInfo, max int64) ([]byte, error) {
	if fi.Size() > max {
		return nil, &TooBigError{fi.Size(), max}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooBigError{-1, max}
	}
	return data, nil
}

// Read opens path as Open does and reads it whole, at most max bytes.
func Read(path string, follow Follow, max int64) ([]byte, error) {
	f, fi, err := Open(path, follow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, fi, max)
}

// Kind names what a file that is not a regular one is, in the words the
// C half's log file check uses (cmd/libnccomring/log.c).
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.String()
}
