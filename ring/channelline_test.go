package ring_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nccomring/libnccomring/ring"
)

func TestChannelLine(t *testing.T) {
	assert.Equal(t, "Channel 00/02 :    0   1  12 123 1234", ring.ChannelLine(0, 2, ints(0, 1, 12, 123, 1234)))
	assert.Equal(t, "Channel 13/16 : ", ring.ChannelLine(13, 16, nil))
	long := make([]int32, 5000)
	line := ring.ChannelLine(1, 32, long)
	assert.Len(t, line, len("Channel 01/32 : ")+4*1020+4, "ranks appended while shorter than 4096, then \" ...\" (P11)")
	assert.Equal(t, " ...", line[len(line)-4:])
}
