//go:build linux

package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
	"unsafe"
)

// The writing half is Linux's: it works relative to directory
// descriptors (openat, renameat), as ringdump's dump directory does, and
// package syscall offers those on Linux only. write_other.go gives the
// tools' WriteFile to the other systems.

// Replace says what WriteAt may replace at the file's name.
type Replace bool

const (
	// ReplaceAny replaces whatever is there (a FIFO or a device
	// included): for a directory the writer checked no other user can
	// write into, where such a thing under its own file's name is debris
	// to clear, not a target (ringdump's dumps).
	ReplaceAny Replace = true
	// ReplaceFile replaces a regular file or a link (the link itself,
	// never what it points to) and refuses anything else with a
	// *NotRegularError: an output path naming /dev/null, a FIFO or a
	// directory is a mistake to report, and as root replacing a device
	// node would break the machine.
	ReplaceFile Replace = false
)

// WriteAt writes the concatenation of parts as the file name (one
// component) in the directory dirfd: into a new file under a hidden name
// with 64 random bits, created with O_CREAT|O_EXCL|O_NOFOLLOW (so no link,
// FIFO or file already there is opened) and mode perm before the umask,
// then renamed over name, which replaces what was there without following
// it. A reader sees either the old file or the new one, never part of
// one. A failure leaves no temporary file behind. Errors are
// *fs.PathError whose Path is the name (or the temporary name) the
// failure concerns, relative to dirfd, or a *NotRegularError.
func WriteAt(dirfd int, name string, perm uint32, replace Replace, parts ...[]byte) error {
	if replace == ReplaceFile {
		if err := replaceable(dirfd, name); err != nil {
			return err
		}
	}
	var tmp string
	var fd int
	for try := 0; ; try++ {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return &fs.PathError{Op: "create", Path: name, Err: err}
		}
		tmp = "." + name + "." + hex.EncodeToString(r[:]) + ".tmp"
		var err error
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

// WriteFile writes data to path as WriteAt does with ReplaceFile, in the
// directory path names as the system resolves it (the operator typed
// it): for the tools' output files (-o, --junit, --emit-hostfile). Its
// errors name path.
func WriteFile(path string, data []byte, perm uint32) error {
	dir, name := filepath.Split(path)
	if name == "" || name == "." || name == ".." {
		return &fs.PathError{Op: "write", Path: path, Err: &NotRegularError{fs.ModeDir}}
	}
	if dir == "" {
		dir = "."
	}
	dirfd, err := openat(atFDCWD, dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(dirfd)
	err = WriteAt(dirfd, name, perm, ReplaceFile, data)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return &fs.PathError{Op: pe.Op, Path: filepath.Join(dir, pe.Path), Err: pe.Err}
	case err != nil:
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// atFDCWD is AT_FDCWD, which package syscall does not name on every
// architecture.
const atFDCWD = -0x64

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

// replaceable refuses a name that holds something other than a regular
// file or a link. It looks by opening the name as Open does (without
// following a link or waiting on a FIFO) and asking fstat, since package
// syscall has no fstatat on every architecture: a FIFO or a device is
// opened for reading, never written, and closed at once.
func replaceable(dirfd int, name string) error {
	fd, err := openat(dirfd, name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	switch err {
	case nil:
	case syscall.ENOENT, syscall.ELOOP: // nothing there, or a link: replaced
		return nil
	case syscall.EACCES, syscall.EPERM:
		// Not readable by this user (a write-only file of theirs, say):
		// the rename decides, and without root it cannot replace a
		// device another user made.
		return nil
	default: // ENXIO among them: a socket, or a device without its driver
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return &NotRegularError{modeOf(st.Mode)}
	}
	return nil
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
// a file alike, with ENOTDIR; package syscall has no fstatat or O_PATH on
// every architecture.)
func IsLinkAt(dirfd int, name string) bool {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return false
	}
	var b [1]byte
	_, _, errno := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, 0)
	return errno == 0
}

// modeOf is the fs.FileMode of a stat's file type bits.
func modeOf(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	}
	return 0
}
