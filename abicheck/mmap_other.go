//go:build !unix

package abicheck

import (
	"fmt"
	"os"
)

// openRegular opens path and accepts regular files only.
func openRegular(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, openError(path, err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, &UnusableError{What: fmt.Sprintf("%s is not a regular file", path), Hint: "give the path of the libnccom shared object itself"}
	}
	return f, st.Size(), nil
}

// mapFile maps nothing here: sections are read into memory.
func mapFile(*os.File, int64) []byte { return nil }

func unmapFile([]byte) {}

func allocAnon(n int) ([]byte, error) { return make([]byte, n), nil }

func freeAnon([]byte) {}
