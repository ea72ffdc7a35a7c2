// Package quote prints untrusted strings (values from the environment,
// fields of files another user may have written, file names) so that what
// they hold shows as text: in double quotes, with C's escapes. Printable
// ASCII stands for itself but for '"' and '\', which are escaped (\" and
// \\); \n, \r and \t are written so; every other byte (the other control
// characters, DEL, and each byte of a non-ASCII character) is \xHH, two
// lowercase hex digits. So a newline cannot start a forged log line, a
// terminal escape sequence prints as its bytes instead of moving the
// cursor, and neither a C1 control character (U+0080-U+009F: U+009B is
// the one-character CSI that starts an escape sequence on some terminals)
// nor a bidirectional override or isolate (U+202A-U+202E, U+2066-U+2069,
// which reorder the text around them) reaches the reader as itself:
// U+009B prints as \xc2\x9b, U+202E as \xe2\x80\xae. Output that keeps
// non-ASCII text as it is (JSON, the HTML report) writes these characters
// as \u escapes instead (Hidden, Visible). A value longer than MaxBytes is cut there, and its whole length
// given: "first MaxBytes bytes"... (N bytes), so that a 1 MiB variable
// makes no 1 MiB log line (D28). The C half of the library quotes the
// same way (cmd/libnccomring/log.c, nccomring_quote).
package quote

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxBytes is how many bytes of a value are quoted (D28).
const MaxBytes = 256

// String returns s quoted.
func String(s string) string {
	return string(Append(make([]byte, 0, min(len(s), MaxBytes)+24), s))
}

// List returns each of ss quoted, comma-separated: "a", "b".
func List(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = String(s)
	}
	return strings.Join(q, ", ")
}

// Append appends s, quoted, to dst.
func Append(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < min(len(s), MaxBytes); i++ {
		dst = appendByte(dst, s[i])
	}
	dst = append(dst, '"')
	if len(s) > MaxBytes {
		dst = append(dst, "... ("...)
		dst = strconv.AppendInt(dst, int64(len(s)), 10)
		dst = append(dst, " bytes)"...)
	}
	return dst
}

const hex = "0123456789abcdef"

func appendByte(dst []byte, c byte) []byte {
	switch {
	case c == '"' || c == '\\':
		return append(dst, '\\', c)
	case c == '\n':
		return append(dst, '\\', 'n')
	case c == '\r':
		return append(dst, '\\', 'r')
	case c == '\t':
		return append(dst, '\\', 't')
	case c < 0x20 || c >= 0x7f:
		return append(dst, '\\', 'x', hex[c>>4], hex[c&0xf])
	}
	return append(dst, c)
}

// Hidden reports whether r is a character that changes how the text
// around it is shown rather than showing itself: a C1 control character
// (U+0080-U+009F) or a bidirectional embedding, override or isolate
// (U+202A-U+202E, U+2066-U+2069). String escapes them with every other
// byte outside printable ASCII; an output that keeps non-ASCII text (JSON)
// must escape these itself.
func Hidden(r rune) bool {
	return r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// Visible returns s with every character Hidden names written as its \u
// escape, six ASCII characters (\u009b, \u202e) that show where it stood;
// every other character stays as it is. In JSON the escape is the same
// character (cli.WriteJSON); in a page's text it shows as itself. s is
// returned as it is when it holds none.
func Visible(s string) string {
	var b []byte
	last := 0 // s[:last] is in b
	for i, r := range s {
		if !Hidden(r) {
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(s)+16)
		}
		b = append(b, s[last:i]...)
		b = append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		last = i + utf8.RuneLen(r)
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}
