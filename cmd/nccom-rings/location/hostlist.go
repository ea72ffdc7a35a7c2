package location

import (
	"fmt"
	"github.com/nccomring/libnccomring/internal/quote"
	"strconv"
)

// A hostlist is Slurm's compact list of names, as topology.conf's Nodes=
// and Switches= values hold them:
//
//	list  = expr { "," expr }
//	expr  = { text | "[" range { "," range } "]" }   (not empty)
//	range = digits [ "-" digits ]                     (low <= high)
//
// text is any bytes but '[', ']' and ','. An expr stands for every name
// its bracket groups give, the first group varying slowest:
// "rack[1-2]n[01-02]" is rack1n01 rack1n02 rack2n01 rack2n02. A number is
// zero-padded to the width of its range's low bound, as Slurm does:
// "trn[001-016,020]" is trn001 ... trn016 trn020, "n[8-10]" is n8 n9 n10.

// maxDigits bounds a number of a range, so that no sum overflows.
const maxDigits = 18

// hostlistError is a hostlist that cannot be expanded: at which byte of
// the value (0-based) and why.
type hostlistError struct {
	Off int
	Msg string
}

func (e *hostlistError) Error() string { return fmt.Sprintf("byte %d: %s", e.Off+1, e.Msg) }

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

// parseHostlist splits value into its exprs and counts the names they
// give, refusing more than budget in all (the count is then > budget).
func parseHostlist(value string, budget uint64) (exprs [][]part, count uint64, err error) {
	if value == "" {
		return nil, 0, &hostlistError{0, "an empty host list"}
	}
	var cur []part
	start := 0 // of the current expr
	n := uint64(1)
	i := 0
	for i <= len(value) {
		if i == len(value) || value[i] == ',' {
			if i == start {
				return nil, 0, &hostlistError{i, "an empty name in the list (two commas, or a comma at an end)"}
			}
			exprs = append(exprs, cur)
			count += n
			if count > budget {
				return nil, count, &hostlistError{start, fmt.Sprintf("the list gives more than %d names", budget)}
			}
			cur, n, start = nil, 1, i+1
			i++
			continue
		}
		switch value[i] {
		case '[':
			group, end, err := parseGroup(value, i)
			if err != nil {
				return nil, 0, err
			}
			var c uint64
			for _, s := range group {
				c += s.hi - s.lo + 1
				if c > budget {
					return nil, c, &hostlistError{i, fmt.Sprintf("the list gives more than %d names", budget)}
				}
			}
			if n > budget/c { // n*c > budget
				return nil, budget + 1, &hostlistError{start, fmt.Sprintf("the list gives more than %d names", budget)}
			}
			n *= c
			cur = append(cur, part{group: group, count: c})
			i = end
		case ']':
			return nil, 0, &hostlistError{i, "']' without '['"}
		default:
			j := i
			for j < len(value) && value[j] != '[' && value[j] != ']' && value[j] != ',' {
				j++
			}
			cur = append(cur, part{text: value[i:j]})
			i = j
		}
	}
	return exprs, count, nil
}

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
				return nil, 0, &hostlistError{i + 1, fmt.Sprintf("the range %s-%s goes down", value[loEnd-s.width:loEnd], value[i+1:hiEnd])}
			}
			s.hi = hi
			i = hiEnd
		}
		group = append(group, s)
		switch {
		case i == len(value):
			return nil, 0, &hostlistError{open, "'[' without ']'"}
		case value[i] == ']':
			return group, i + 1, nil
		case value[i] == ',':
			i++
		default:
			return nil, 0, &hostlistError{i, fmt.Sprintf("%s in a bracket group, which holds numbers and ranges (1-4) separated by commas", quote.String(value[i:i+1]))}
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
		return 0, 0, &hostlistError{i, "a number expected in the bracket group"}
	case j == i:
		return 0, 0, &hostlistError{i, fmt.Sprintf("%s where a number was expected in a bracket group", quote.String(value[i:i+1]))}
	case j-i > maxDigits:
		return 0, 0, &hostlistError{i, fmt.Sprintf("a number of %d digits; at most %d", j-i, maxDigits)}
	}
	n, _ := strconv.ParseUint(value[i:j], 10, 64) // <= 18 digits: no error
	return n, j, nil
}

// expandHostlist returns every name of value, in order, refusing more
// than budget names (the error then says so).
func expandHostlist(value string, budget uint64) ([]string, error) {
	exprs, count, err := parseHostlist(value, budget)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, count)
	var buf []byte
	for _, parts := range exprs {
		names = expand(names, buf[:0], parts)
	}
	return names, nil
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
