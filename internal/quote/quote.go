// Package quote prints untrusted strings (values from the environment,
// fields of files another user may have written, file names) so that what
// they hold shows as text: in double quotes, with C's escapes. Printable
// ASCII stands for itself but for '"' and '\', which are escaped (\" and
// \\); \n, \r and \t are written so; every other byte (the other control
// characters, DEL, and each byte of a non-ASCII character) is \xHH, two
// lowercase hex digits. So a newline cannot start a forged log line, and a
// terminal escape sequence prints as its bytes instead of moving the
// cursor. A value longer than MaxBytes is cut there, and its whole length
// given: "first MaxBytes bytes"... (N bytes), so that a 1 MiB variable
// makes no 1 MiB log line (D28). The C half of the library quotes the
// same way (cmd/libnccomring/log.c, nccomring_quote).
package quote

import "strconv"

// MaxBytes is how many bytes of a value are quoted (D28).
const MaxBytes = 256

// String returns s quoted.
func String(s string) string {
	return string(Append(make([]byte, 0, min(len(s), MaxBytes)+24), s))
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
