//go:build unix

package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes data to path (the tools' -o, --junit and
// --emit-hostfile) into a new file beside it, then renamed over it, in the
// directory path names as the system resolves it (the operator typed
// it), opened once (os.Root: every later step is relative to it). A
// symbolic link at path is replaced, never written through; a regular
// file is replaced whole; anything else there (a FIFO, which an ordinary
// open would wait on, a device such as /dev/null, a directory, a socket)
// is refused with a *NotRegularError, never opened for writing and never
// replaced: as root, replacing a device node would break the machine.
// The file is new, so it takes perm (before the umask) and the writer's
// ownership, not those of a file it replaces. Its errors name path.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	dir, name := filepath.Split(path)
	if name == "" || name == "." || name == ".." {
		return &fs.PathError{Op: "write", Path: path, Err: &NotRegularError{fs.ModeDir}}
	}
	if dir == "" {
		dir = "."
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	// Looked at without following or opening it (fstatat): a FIFO must
	// not be opened, even to look.
	fi, err := root.Lstat(name)
	switch {
	case err == nil && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0:
		return &fs.PathError{Op: "write", Path: path, Err: &NotRegularError{fi.Mode()}}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return rooted(dir, err)
	}
	var f *os.File
	var tmp string
	for try := 0; ; try++ {
		if tmp, err = tempName(name); err != nil {
			return &fs.PathError{Op: "create", Path: path, Err: err}
		}
		// O_EXCL: nothing already under the name is opened, a link
		// included.
		f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || try == 3 {
			return rooted(dir, err)
		}
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return rooted(dir, err)
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

// rooted is an os.Root error with its path made whole again (os.Root
// names the path inside the root).
func rooted(dir string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: filepath.Join(dir, pe.Path), Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &fs.PathError{Op: le.Op, Path: filepath.Join(dir, le.New), Err: le.Err}
	}
	return err
}
