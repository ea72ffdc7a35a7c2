package location

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The cursor gives what a count from the start gives, for offsets in any
// order: forward as the decoder reads, back for an error.
func TestLineCursor(t *testing.T) {
	data := []byte("ab\ncd\n\nef\r\n{\n")
	naive := func(off int) (int, int) {
		return 1 + bytes.Count(data[:off], []byte{'\n'}), off - (bytes.LastIndexByte(data[:off], '\n') + 1) + 1
	}
	var c lineCursor
	for _, off := range []int{0, 1, 2, 3, 4, 6, 7, 9, 10, 11, 12, 13, 5, 3, 8, 13, 0} {
		line, col := c.at(data, off)
		wl, wc := naive(off)
		assert.Equal(t, [2]int{wl, wc}, [2]int{line, col}, "offset %d", off)
	}
	line, col := c.at(data, 12)
	assert.Equal(t, [2]int{5, 2}, [2]int{line, col}, "the byte after '{' on line 5")
}
