package ab

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"8": 8, "1M": 1 << 20, "1m": 1 << 20, "1MB": 1 << 20, "1MiB": 1 << 20,
		"16K": 16384, "2G": 2 << 30, "64G": 64 << 30, "1073741824": 1 << 30,
	} {
		got, err := ParseSize(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{"", "0", "-1", "65G", "68719476737", "1T", "M", "1.5M", "x"} {
		_, err := ParseSize(in)
		assert.Error(t, err, in)
	}
}
