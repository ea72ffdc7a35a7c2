// Package hiddentext is what the tools' tests of issue 34's F7 share: a
// value that carries characters a terminal or a page does not show as
// themselves, and a check that an output holds none of them raw. The
// ranges are spelled out here, not taken from quote.Hidden, so that the
// tests check that rule too.
package hiddentext

import "unicode/utf8"

// Chars are U+009B (the one-character CSI), U+202E (right-to-left
// override) and U+2066 (left-to-right isolate): a value carrying them
// restyles or reorders the text shown after it.
const Chars = "\u009b\u202e\u2066"

// Raw is the first C1 control character (U+0080-U+009F) or bidirectional
// embedding, override or isolate (U+202A-U+202E, U+2066-U+2069) that out
// holds as itself, and false when it holds none.
func Raw(out string) (rune, bool) {
	for _, r := range out {
		if r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			return r, true
		}
	}
	return utf8.RuneError, false
}
