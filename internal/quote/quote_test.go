package quote

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nccomring/libnccomring/internal/fuzzseed"
)

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `""`},
		{"/shared/rings/job42", `"/shared/rings/job42"`},
		{`a "b" \c`, `"a \"b\" \\c"`},
		{"x\ny\r\tz", `"x\ny\r\tz"`},
		{"WARN\n1:2:3 [0] NCCL WARN forged", `"WARN\n1:2:3 [0] NCCL WARN forged"`},
		{"\x1b[2J\x1b[Hevery rank agrees", `"\x1b[2J\x1b[Hevery rank agrees"`},
		{"\x00\x7f", `"\x00\x7f"`},
		{"jöb", `"j\xc3\xb6b"`},
		{"\u009b31m", `"\xc2\x9b31m"`},
		{"\u202eexe.txt", `"\xe2\x80\xaeexe.txt"`},
		{"a\u2066b\u2069", `"a\xe2\x81\xa6b\xe2\x81\xa9"`},
		{"\xff", `"\xff"`},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// Whatever the input, the output is printable ASCII: no byte that a
// terminal or a log reader could take for anything but text.
func FuzzString(f *testing.F) {
	c := fuzzseed.New(f)
	c.Add("plain")
	c.Add("\x1b]0;title\x07")
	c.Add("line\nNCCL WARN")
	c.Fuzz(func(t *testing.T, s string) {
		q := String(s)
		if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
			t.Fatalf("%q: not in quotes: %s", s, q)
		}
		for i := 0; i < len(q); i++ {
			if q[i] < 0x20 || q[i] >= 0x7f {
				t.Fatalf("%q: byte %#x in %s", s, q[i], q)
			}
		}
		if back, ok := unquote(q); !ok || back != s {
			t.Fatalf("%q: quoted as %s, which reads back as %q", s, q, back)
		}
	})
}

// unquote reads String's output back: it must be exactly one quoted
// string, which Go's own syntax reads the same (\xHH is a byte there too).
func unquote(q string) (string, bool) {
	s, err := strconv.Unquote(q)
	return s, err == nil
}

// D28: a value longer than 256 bytes is cut there, with its whole length;
// one of exactly 256 is not. The cut counts the value's bytes, not the
// escapes they print as.
func TestLongValuesAreCutAt256Bytes(t *testing.T) {
	a256 := strings.Repeat("a", 256)
	assert.Equal(t, `"`+a256+`"`, String(a256))
	assert.Equal(t, `"`+a256+`"... (1048576 bytes)`, String(strings.Repeat("a", 1<<20)))
	assert.Equal(t, `"`+strings.Repeat(`\n`, 256)+`"... (257 bytes)`, String(strings.Repeat("\n", 257)))
}

func TestHidden(t *testing.T) {
	for r, want := range map[rune]bool{
		0x7f: false, 0x80: true, 0x9b: true, 0x9f: true, 0xa0: false, 'é': false,
		0x2029: false, 0x202a: true, 0x202e: true, 0x202f: false,
		0x2065: false, 0x2066: true, 0x2069: true, 0x206a: false,
	} {
		assert.Equal(t, want, Hidden(r), "%U", r)
	}
}

func TestVisible(t *testing.T) {
	assert.Equal(t, "plain é", Visible("plain é"))
	assert.Equal(t, `host\u009b31m\u202etxt.exe\u2066\u0085`, Visible("host\u009b31m\u202etxt.exe\u2066\u0085"))
	assert.Equal(t, "\xff\xc2", Visible("\xff\xc2"), "invalid UTF-8 is not a hidden character")
}
