//go:build unix

package layout

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ReadProfile reads the layout profile at path, which another user may
// have put there (a shared directory) or swapped: a symbolic link is not
// followed (O_NOFOLLOW; the last component, as for every such open), the
// open does not wait (O_NONBLOCK: a FIFO would block an ordinary open
// until a writer came), only a regular file is read, and no more than
// MaxProfileSize bytes of it. The errors say what the file is instead.
func ReadProfile(path string) (Profile, error) {
	data, err := readProfileFile(path)
	if err != nil {
		return Profile{}, err
	}
	return ParseProfile(data)
}

func readProfileFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("it is a symbolic link, which is not followed (a profile must be a regular file, named by its own path)")
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("it is not a regular file (%s)", fileKind(st.Mode()))
	}
	if st.Size() > MaxProfileSize {
		return nil, fmt.Errorf("it has %d bytes, more than the %d a layout profile may have", st.Size(), MaxProfileSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxProfileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxProfileSize {
		return nil, fmt.Errorf("it has more than the %d bytes a layout profile may have", MaxProfileSize)
	}
	return data, nil
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
