package ringdump_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nccomring/libnccomring/ringdump"
)

func TestOrderOf(t *testing.T) {
	// Nothing asked, no location: no order in the dump.
	assert.Nil(t, ringdump.OrderOf(false, "", false, false, "", nil))
	// A location alone: rank order asked and kept.
	assert.Equal(t, &ringdump.Order{Asked: "rank", Location: "s/a"}, ringdump.OrderOf(false, "s/a", false, false, "", nil))
	// Another rank asked; this one did not, so Postset fell back.
	assert.Equal(t, &ringdump.Order{Asked: "rank", Note: "fell back"}, ringdump.OrderOf(false, "", true, false, "fell back", []int32{}))
	assert.Equal(t, &ringdump.Order{Asked: "network", Location: "s/b", Network: true, Sequence: []int{0, 2, 1}},
		ringdump.OrderOf(true, "s/b", true, true, "", []int32{0, 2, 1}))
	assert.Equal(t, []int{-1, 7}, ringdump.Ints([]int32{-1, 7}))
}
