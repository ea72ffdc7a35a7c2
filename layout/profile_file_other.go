//go:build !unix

package layout

import (
	"fmt"
	"io"
	"os"
)

// ReadProfile reads the layout profile at path: a regular file of at most
// MaxProfileSize bytes (links are followed here: no O_NOFOLLOW).
func ReadProfile(path string) (Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return Profile{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Profile{}, err
	}
	if !st.Mode().IsRegular() {
		return Profile{}, fmt.Errorf("it is not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxProfileSize+1))
	if err != nil {
		return Profile{}, err
	}
	if len(data) > MaxProfileSize {
		return Profile{}, fmt.Errorf("it has more than the %d bytes a layout profile may have", MaxProfileSize)
	}
	return ParseProfile(data)
}
