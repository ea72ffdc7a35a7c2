//go:build linux

package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// WriteAt and IsLinkAt work relative to a directory descriptor (openat,
// renameat, readlinkat), as ringdump's dump directory is held; WriteFile
// (write.go), for a path, opens the path's directory and writes by
// WriteAt.

// WriteAt writes the concatenation of parts as the file name (one
// component) in the directory dirfd: into a new file under a hidden name
// with 64 random bits, created with O_CREAT|O_EXCL|O_NOFOLLOW (so no link,
// FIFO or file already there is opened) and mode perm before the umask,
// then renamed over name, which replaces what was there without following
// it, whatever it is (a FIFO too: for a directory whose writer checked
// that no other user can write into it, where such a thing under its own
// file's name is debris to clear). A reader sees either the old file or
// the new one, never part of one. A failure leaves no temporary file
// behind. Errors are *fs.PathError whose Path is the name (or the
// temporary name) the failure concerns, relative to dirfd.
func WriteAt(dirfd int, name string, perm uint32, parts ...[]byte) error {
	var tmp string
	var fd int
	for try := 0; ; try++ {
		var err error
		if tmp, err = tempName(name); err != nil {
			return &fs.PathError{Op: "create", Path: name, Err: err}
		}
		fd, err = openat(dirfd, tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm)
		if err == nil {
			break
		}
		// Another name for a file or link someone placed under this one
		// (64 random bits: a collision is that, or a broken generator).
		if err != syscall.EEXIST || try == 3 {
			return &fs.PathError{Op: "create", Path: tmp, Err: err}
		}
	}
	err := writeAll(fd, parts)
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		syscall.Unlinkat(dirfd, tmp)
		return &fs.PathError{Op: "write", Path: tmp, Err: err}
	}
	if err := syscall.Renameat(dirfd, tmp, dirfd, name); err != nil {
		syscall.Unlinkat(dirfd, tmp)
		return &fs.PathError{Op: "rename", Path: name, Err: err}
	}
	return nil
}

// tempName is a hidden name beside name with 64 random bits: one another
// user cannot have prepared a link under.
func tempName(name string) (string, error) {
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	return "." + name + "." + hex.EncodeToString(r[:]) + ".tmp", nil
}

// openat retries on EINTR, which a signal can cause while a slow (network)
// file system opens.
func openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := syscall.Openat(dirfd, name, flags, perm)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func writeAll(fd int, parts [][]byte) error {
	for _, p := range parts {
		for len(p) > 0 {
			n, err := syscall.Write(fd, p)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			p = p[n:]
		}
	}
	return nil
}

// IsLinkAt says whether name in the directory dirfd is a symbolic link,
// without following it or opening what it names: readlinkat succeeds on
// a link only. (Opening with O_DIRECTORY|O_NOFOLLOW fails on a link and on
// a file alike, with ENOTDIR.)
func IsLinkAt(dirfd int, name string) bool {
	var b [1]byte
	_, err := unix.Readlinkat(dirfd, name, b[:])
	return err == nil
}
