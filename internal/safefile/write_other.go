//go:build unix && !linux

package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile is write_linux.go's under the same rules, through os.Root
// (Lstat, an exclusive create, Rename, each relative to the directory
// opened once), for the systems where package syscall has no openat: the
// tools build there, the library does not.
func WriteFile(path string, data []byte, perm uint32) error {
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
	if fi, err := root.Lstat(name); err == nil && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
		return &fs.PathError{Op: "write", Path: path, Err: &NotRegularError{fi.Mode()}}
	}
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return &fs.PathError{Op: "create", Path: path, Err: err}
	}
	tmp := "." + name + "." + hex.EncodeToString(r[:]) + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(perm))
	if err != nil {
		return err
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
	}
	return err
}
