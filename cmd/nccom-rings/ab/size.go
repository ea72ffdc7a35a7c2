package ab

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxBytes is the largest message size ab writes: 64 GiB, past any
// device's memory today.
const MaxBytes = 64 << 30

// ParseSize reads a message size as nccl-tests' -b and -e take one: a
// whole number of bytes, or of KiB, MiB or GiB with a K, M or G after it
// (either case, a B after it allowed: 1M, 1MB, 1MiB). The kit writes the
// byte count itself, which both tools read alike. At least 1, at most
// MaxBytes.
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	shift := 0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			shift = 10
		case 'M':
			shift = 20
		case 'G':
			shift = 30
		}
		if shift > 0 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 1 || v > MaxBytes>>shift {
		return 0, fmt.Errorf("%q is not a size of 1 byte to 64G (a number, with K, M or G after it for KiB, MiB or GiB)", s)
	}
	return v << shift, nil
}
