//go:build linux

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// WriteFile writes data to path (the tools' -o, --junit and
// --emit-hostfile) by WriteAt, in the directory path names as the system
// resolves it (the operator typed it), opened once: every later step is
// relative to it. A symbolic link at path is replaced, never written
// through; a regular file is replaced whole; anything else there (a FIFO,
// which an ordinary open would wait on, a device such as /dev/null, a
// directory, a socket) is refused with a *NotRegularError, never opened
// for writing and never replaced: as root, replacing a device node would
// break the machine. The file is new, so it takes perm (before the umask)
// and the writer's ownership, not those of a file it replaces. Its errors
// name path.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	dir, name := filepath.Split(path)
	if name == "" || name == "." || name == ".." {
		return &fs.PathError{Op: "write", Path: path, Err: &NotRegularError{fs.ModeDir}}
	}
	if dir == "" {
		dir = "."
	}
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	dirfd := int(d.Fd())
	// Looked at without following or opening it (fstatat): a FIFO must
	// not be opened, even to look.
	var st unix.Stat_t
	err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch mode := fileMode(st.Mode); {
	case err == nil && !mode.IsRegular() && mode&fs.ModeSymlink == 0:
		return &fs.PathError{Op: "write", Path: path, Err: &NotRegularError{mode}}
	case err != nil && err != unix.ENOENT:
		return &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	return rooted(dir, WriteAt(dirfd, name, uint32(perm.Perm()), data))
}

// fileMode is the fs.FileMode of a stat's st_mode type bits.
func fileMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	default:
		return fs.ModeDevice
	}
}

// rooted is a WriteAt error with its path made whole again (WriteAt names
// the file inside the directory).
func rooted(dir string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: filepath.Join(dir, pe.Path), Err: pe.Err}
	}
	return err
}
