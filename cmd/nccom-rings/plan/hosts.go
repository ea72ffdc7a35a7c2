package plan

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/internal/quote"
)

// Host is one host line of a hostfile.
type Host struct {
	Name string // the line's first field, without an MPICH ":N" suffix
	Line int    // 1-based
	Text string // the whole line, comments and all, as EmitHostfile writes it back
	// Slots is the rank count the line gives the host (OpenMPI's
	// "slots=N", MPICH's "host:N"), 0 when it gives none.
	Slots int
}

// ReadHostfile reads a launcher's hostfile: one host a line, its first
// blank-separated field, an MPICH "host:4" read as "host" with 4 slots, an
// OpenMPI "slots=4" field read as 4 slots (a count that is not digits in
// [1, MaxRanks] is refused), other fields ignored; '#' comments and blank
// lines skipped. A host listed twice (location.Key) is refused: a plan
// gives each host one node. The file is read under location.ReadFile's
// limits; at most MaxRanks hosts.
func ReadHostfile(path string) ([]Host, error) {
	data, err := location.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var hosts []Host
	first := map[string]int{}
	for i, raw := range bytes.Split(data, []byte("\n")) {
		text := strings.TrimSuffix(string(raw), "\r")
		body, _, _ := strings.Cut(text, "#")
		fields := strings.Fields(body)
		if len(fields) == 0 {
			continue
		}
		name, slots, given := fields[0], "", ""
		if at := strings.LastIndexByte(name, ':'); at > 0 && isDigits(name[at+1:]) {
			name, slots, given = name[:at], name[at+1:], fields[0]
		}
		for _, f := range fields[1:] {
			if n, ok := strings.CutPrefix(f, "slots="); ok {
				slots, given = n, f
			}
		}
		line, count := i+1, slotCount(slots)
		if given != "" && count == 0 {
			return nil, &location.Error{File: path, Line: line, Col: strings.Index(text, given) + 1, Msg: fmt.Sprintf("%s: the slot count is not a number in [1, %d]", quote.String(given), MaxRanks)}
		}
		if at, dup := first[location.Key(name)]; dup {
			return nil, &location.Error{File: path, Line: line, Col: 1, Msg: fmt.Sprintf("host %s again; first on line %d", quote.String(name), at)}
		}
		if len(hosts) == MaxRanks {
			return nil, &location.Error{File: path, Line: line, Msg: fmt.Sprintf("more than %d hosts", MaxRanks)}
		}
		first[location.Key(name)] = line
		hosts = append(hosts, Host{Name: name, Line: line, Text: text, Slots: count})
	}
	if len(hosts) == 0 {
		return nil, &location.Error{File: path, Msg: "no host in the file"}
	}
	return hosts, nil
}

// slotCount is a slot count's value, 0 when it is not one in [1, MaxRanks].
func slotCount(s string) int {
	n, err := strconv.Atoi(s)
	if !isDigits(s) || err != nil || n < 1 || n > MaxRanks {
		return 0
	}
	return n
}

func isDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Locate gives each host the location entries give its name
// (location.Locate), "" when none; missing lists the hosts without one.
func Locate(hosts []Host, entries []location.Entry) (locations []string, missing []int) {
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
	}
	return location.Locate(names, entries)
}

// EmitHostfile is the hostfile whose order follows order (NetworkOrder):
// a comment saying so, then each host's line as the file had it.
func EmitHostfile(source string, hosts []Host, order []int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# the hosts of %s in D25's network order (nccom-rings plan --emit-hostfile):\n", quote.String(source))
	b.WriteString("# rank order of a launcher that keeps this order follows the network\n")
	for _, m := range order {
		b.WriteString(hosts[m].Text)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// CommonSlots is the slot count every host gives, when all give the same
// one; false when some host gives none or two hosts differ.
func CommonSlots(hosts []Host) (int, bool) {
	if len(hosts) == 0 {
		return 0, false
	}
	for _, h := range hosts {
		if h.Slots == 0 || h.Slots != hosts[0].Slots {
			return 0, false
		}
	}
	return hosts[0].Slots, true
}

// OtherSlots counts the hosts that give a slot count other than local,
// and returns the first of them (an index into hosts, -1 when none).
func OtherSlots(hosts []Host, local int) (first, count int) {
	first = -1
	for i, h := range hosts {
		if h.Slots != 0 && h.Slots != local {
			if count++; first < 0 {
				first = i
			}
		}
	}
	return first, count
}
