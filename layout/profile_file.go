package layout

import (
	"errors"
	"fmt"

	"github.com/nccomring/libnccomring/internal/safefile"
)

// ReadProfile reads the layout profile at path, which another user may
// have put there (a shared directory) or swapped: under internal/safefile's
// rules (a symbolic link is not followed, a FIFO never waited on, only a
// regular file read), and no more than MaxProfileSize bytes of it. The
// errors say what the file is instead.
func ReadProfile(path string) (Profile, error) {
	data, err := safefile.Read(path, safefile.NoLinks, MaxProfileSize)
	var big *safefile.TooBigError
	switch {
	case errors.Is(err, safefile.ErrLink):
		return Profile{}, fmt.Errorf("it is a symbolic link, which is not followed (a profile must be a regular file, named by its own path)")
	case errors.As(err, &big) && big.Size >= 0:
		return Profile{}, fmt.Errorf("it has %d bytes, more than the %d a layout profile may have", big.Size, MaxProfileSize)
	case big != nil:
		return Profile{}, fmt.Errorf("it has more than the %d bytes a layout profile may have", MaxProfileSize)
	case err != nil:
		var notRegular *safefile.NotRegularError
		if errors.As(err, &notRegular) {
			return Profile{}, fmt.Errorf("it %v", err)
		}
		return Profile{}, err
	}
	return ParseProfile(data)
}
