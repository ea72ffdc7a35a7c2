package location

import (
	"fmt"
	"github.com/nccomring/libnccomring/internal/quote"
	"strconv"
)

// A hostlist is Slurm's compact list of names, as topology.conf's Nodes=
// and Switches= values hold them:
//
//	list  = { sep } expr { sep { sep } expr } { sep }
//	expr  = { text | "[" range { "," range } "]" }   (not empty)
//	range = digits [ "-" digits ]                     (low <= high)
//
// sep is ',' or a blank (space, tab, newline), and separators in a row
// or at an end are skipped, as Slurm's hostlist skips them; text is any
// bytes but '[', ']' and a sep. An expr stands for every name
// its bracket groups give, the first group varying slowest:
// "rack[1-2]n[01-02]" is rack1n01 rack1n02 rack2n01 rack2n02. A number is
// zero-padded to the width of its range's low bound, as Slurm does:
// "trn[001-016,020]" is trn001 ... trn016 trn020, "n[8-10]" is n8 n9 n10.

// maxDigits bounds a number of a range, so that no sum overflows.
const maxDigits = 18

// hostlistError is a hostlist that cannot be expanded: at which byte of
// the value (0-based) and why. Kind says which limit a list that is well
// formed went past, with its sizes; Msg says why in every case.
type hostlistError struct {
	Off  int
	Msg  string
	Kind limitKind
	// The expr (or the list) over the limit: its names, its longest
	// name's bytes, and how many bytes its names take at most (names
	// times the longest).
	Names, Longest, Bytes uint64
}

func (e *hostlistError) Error() string { return fmt.Sprintf("byte %d: %s", e.Off+1, e.Msg) }

// limitKind is which limit of hostlistLimits a list went past.
type limitKind int

const (
	notALimit    limitKind = iota // a list that is not well formed
	tooManyNames                  // more than names
	tooLongName                   // a name of more than nameLen bytes
	tooManyBytes                  // more than bytes
)

// hostlistLimits bound what a list may expand to, checked on its counts
// before a name is made: names in all, bytes in a name, and bytes in all
// (each expr's names times its longest name, summed), so that the memory
// an expansion takes is known to be within bounds before it is taken.
type hostlistLimits struct {
	names   uint64
	nameLen uint64
	bytes   uint64
}

// span is one range of a bracket group.
type span struct {
	lo, hi uint64
	width  int
}

// part is a run of text or a bracket group of an expr.
type part struct {
	text  string
	group []span // nil for text
	count uint64 // names the group gives
}

// digits is how many decimal digits v has.
func digits(v uint64) uint64 {
	n := uint64(1)
	for ; v >= 10; v /= 10 {
		n++
	}
	return n
}

// parseHostlist splits value into its exprs and sizes what they give:
// count names, whose bytes are at most size (each expr's names times its
// longest name, summed). It refuses a list past lim (a *hostlistError
// whose Kind says which limit) before anything is expanded.
func parseHostlist(value string, lim hostlistLimits) (exprs [][]part, count, size uint64, err error) {
	if value == "" {
		return nil, 0, 0, &hostlistError{Off: 0, Msg: "an empty host list"}
	}
	var cur []part
	start := 0 // of the current expr
	n := uint64(1)
	longest := uint64(0) // bytes of the current expr's longest name
	i := 0
	tooMany := func(off int, c uint64) error {
		return &hostlistError{Off: off, Msg: fmt.Sprintf("the list gives more than %d names", lim.names), Kind: tooManyNames, Names: c}
	}
	for i <= len(value) {
		if i == len(value) || isListSep(value[i]) {
			if i == start { // separators in a row, or at an end: skipped, as Slurm does
				start = i + 1
				i++
				continue
			}
			if longest > lim.nameLen {
				return nil, 0, 0, &hostlistError{Off: start, Kind: tooLongName, Names: n, Longest: longest,
					Msg: fmt.Sprintf("the list gives names of %d bytes, more than the %d a name may have", longest, lim.nameLen)}
			}
			exprs = append(exprs, cur)
			count += n
			if count > lim.names {
				return nil, count, 0, tooMany(start, count)
			}
			// n <= lim.names and longest <= lim.nameLen: no overflow.
			size += n * longest
			if size > lim.bytes {
				return nil, 0, 0, &hostlistError{Off: start, Kind: tooManyBytes, Names: n, Longest: longest, Bytes: size,
					Msg: fmt.Sprintf("the list's names take up to %d bytes (names times the longest), more than %d", size, lim.bytes)}
			}
			cur, n, longest, start = nil, 1, 0, i+1
			i++
			continue
		}
		switch value[i] {
		case '[':
			group, end, err := parseGroup(value, i)
			if err != nil {
				return nil, 0, 0, err
			}
			var c, width uint64
			for _, s := range group {
				c += s.hi - s.lo + 1
				if c > lim.names {
					return nil, c, 0, tooMany(i, c)
				}
				width = max(width, uint64(s.width), digits(s.hi))
			}
			if n > lim.names/c { // n*c > lim.names
				return nil, lim.names + 1, 0, tooMany(start, lim.names+1)
			}
			n *= c
			longest += width // at most 19 bytes a group of a line's
			cur = append(cur, part{group: group, count: c})
			i = end
		case ']':
			return nil, 0, 0, &hostlistError{Off: i, Msg: "']' without '['"}
		default:
			j := i
			for j < len(value) && value[j] != '[' && value[j] != ']' && !isListSep(value[j]) {
				j++
			}
			longest += uint64(j - i)
			cur = append(cur, part{text: value[i:j]})
			i = j
		}
	}
	if len(exprs) == 0 {
		return nil, 0, 0, &hostlistError{Off: 0, Msg: "an empty host list"}
	}
	return exprs, count, size, nil
}

// isListSep reports whether c separates the names of a list outside
// brackets: Slurm's hostlist takes commas and blanks, and skips them in a
// row ("a, b", "a,,b" and " a,b " are a and b).
func isListSep(c byte) bool { return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseGroup reads the bracket group at value[open] == '[' and returns
// its ranges and the index after its ']'.
func parseGroup(value string, open int) ([]span, int, error) {
	var group []span
	i := open + 1
	for {
		lo, loEnd, err := parseNumber(value, i)
		if err != nil {
			return nil, 0, err
		}
		s := span{lo: lo, hi: lo, width: loEnd - i}
		i = loEnd
		if i < len(value) && value[i] == '-' {
			hi, hiEnd, err := parseNumber(value, i+1)
			if err != nil {
				return nil, 0, err
			}
			if hi < lo {
				return nil, 0, &hostlistError{Off: i + 1, Msg: fmt.Sprintf("the range %s-%s goes down", value[loEnd-s.width:loEnd], value[i+1:hiEnd])}
			}
			s.hi = hi
			i = hiEnd
		}
		group = append(group, s)
		switch {
		case i == len(value):
			return nil, 0, &hostlistError{Off: open, Msg: "'[' without ']'"}
		case value[i] == ']':
			return group, i + 1, nil
		case value[i] == ',':
			i++
		default:
			return nil, 0, &hostlistError{Off: i, Msg: fmt.Sprintf("%s in a bracket group, which holds numbers and ranges (1-4) separated by commas", quote.String(value[i:i+1]))}
		}
	}
}

// parseNumber reads the decimal digits at value[i:].
func parseNumber(value string, i int) (uint64, int, error) {
	j := i
	for j < len(value) && '0' <= value[j] && value[j] <= '9' {
		j++
	}
	switch {
	case j == i && (i == len(value) || value[i] == ']'):
		return 0, 0, &hostlistError{Off: i, Msg: "a number expected in the bracket group"}
	case j == i:
		return 0, 0, &hostlistError{Off: i, Msg: fmt.Sprintf("%s where a number was expected in a bracket group", quote.String(value[i:i+1]))}
	case j-i > maxDigits:
		return 0, 0, &hostlistError{Off: i, Msg: fmt.Sprintf("a number of %d digits; at most %d", j-i, maxDigits)}
	}
	n, _ := strconv.ParseUint(value[i:j], 10, 64) // <= 18 digits: no error
	return n, j, nil
}

// expandHostlist returns every name of value, in order, and size, what
// parseHostlist bounds their bytes by; it refuses a list past lim before
// a name is made (the error then says which limit).
func expandHostlist(value string, lim hostlistLimits) (names []string, size uint64, err error) {
	exprs, count, size, err := parseHostlist(value, lim)
	if err != nil {
		return nil, 0, err
	}
	names = make([]string, 0, count)
	var buf []byte
	for _, parts := range exprs {
		names = expand(names, buf[:0], parts)
	}
	return names, size, nil
}

// expand appends to names every name of parts, each prefixed by prefix.
func expand(names []string, prefix []byte, parts []part) []string {
	if len(parts) == 0 {
		return append(names, string(prefix))
	}
	p := parts[0]
	if p.group == nil {
		return expand(names, append(prefix, p.text...), parts[1:])
	}
	for _, s := range p.group {
		var tmp [20]byte
		for v := s.lo; ; v++ {
			digits := strconv.AppendUint(tmp[:0], v, 10)
			next := prefix
			for pad := s.width - len(digits); pad > 0; pad-- {
				next = append(next, '0')
			}
			next = append(next, digits...)
			names = expand(names, next, parts[1:])
			if v == s.hi {
				break
			}
		}
	}
	return names
}
