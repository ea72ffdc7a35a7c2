package ring

import (
	"strconv"
)

// maxChannelLine is where a Channel INFO line stops (P11): NCCL prints every
// rank, but a line of 131,072 ranks helps nobody.
const maxChannelLine = 4096

// ChannelLine formats ring c of nChannels the way NCCL logs it on rank 0
// (D17): "Channel %02d/%02d : " then " %3d" per rank, as in NCCL's logs
// ("Channel 01/16 :    0   8  15"). Ranks are appended while the line is
// shorter than 4096 characters; if any remain then, " ..." ends it (P11).
func ChannelLine(c, nChannels int, ranks []int32) string {
	buf := make([]byte, 0, min(maxChannelLine+8, 24+4*len(ranks)))
	buf = append(buf, "Channel "...)
	buf = appendPadded(buf, c, 2, '0')
	buf = append(buf, '/')
	buf = appendPadded(buf, nChannels, 2, '0')
	buf = append(buf, " : "...)
	for _, r := range ranks {
		if len(buf) >= maxChannelLine {
			return string(append(buf, " ..."...))
		}
		buf = append(buf, ' ')
		buf = appendPadded(buf, int(r), 3, ' ')
	}
	return string(buf)
}

// appendPadded appends v in decimal, left-padded with pad to width, like
// printf's %0*d / %*d.
func appendPadded(buf []byte, v, width int, pad byte) []byte {
	var digits [20]byte
	s := strconv.AppendInt(digits[:0], int64(v), 10)
	for i := len(s); i < width; i++ {
		buf = append(buf, pad)
	}
	return append(buf, s...)
}
