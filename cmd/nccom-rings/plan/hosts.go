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

// ReadHostfile reads a launcher's hostfile (UTF-8, a byte-order mark
// skipped; UTF-16 refused, location.ReadFile): one host a line, its first
// blank-separated field, an MPICH "host:4" read as "host" with 4 slots, an
// OpenMPI "slots=4" field read as 4 slots (a count that is not digits in
// [1, MaxRanks] is refused), other fields ignored; '#' comments and blank
// lines skipped. A first field that is a Slurm host list ("trn[001-016]",
// "a,b") stands for each of its hosts in order, as `scontrol show
// hostnames` expands it, each with the line's slots (location.Hostnames;
// a list is sized before it is expanded). A host listed twice
// (location.Key) is refused: a plan gives each host one node. The file is
// read under location.ReadFile's limits; at most MaxRanks hosts.
func ReadHostfile(path string) ([]Host, error) {
	data, err := location.ReadFile(path)
	if err != nil {
		return nil, err
	}
	data = location.BlankBOM(data)
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
		// The first field begins at the line's first byte that is not
		// blank: no earlier match.
		at := strings.Index(text, fields[0])
		names := []string{name}
		if !location.IsHostlist(name) {
			// A hostfile's host is a name (MPI's, as Slurm's): a JSON
			// file or a quoted name given as one is not planned.
			if err := location.CheckHost(name); err != nil {
				return nil, &location.Error{File: path, Line: line, Col: at + 1, Msg: err.Error()}
			}
		} else {
			if names, err = location.Hostnames(name, MaxRanks); err != nil {
				e := err.(*location.Error)
				e.File, e.Line, e.Col = path, line, at+e.Col
				return nil, e
			}
		}
		for _, n := range names {
			if at, dup := first[location.Key(n)]; dup {
				return nil, &location.Error{File: path, Line: line, Col: 1, Msg: fmt.Sprintf("host %s again; first on line %d", quote.String(n), at)}
			}
			if len(hosts) == MaxRanks {
				return nil, &location.Error{File: path, Line: line, Msg: fmt.Sprintf("more than %d hosts", MaxRanks)}
			}
			first[location.Key(n)] = line
			// A host of a list keeps the rest of the list's line.
			hosts = append(hosts, Host{Name: n, Line: line, Text: text[:at] + n + text[at+len(name):], Slots: count})
		}
	}
	if len(hosts) == 0 {
		return nil, &location.Error{File: path, Msg: "no host in the file"}
	}
	return hosts, nil
}

// HostsOfList is the hosts of the Slurm host list (location.Hostnames),
// named source in errors (SLURM_JOB_NODELIST, say): each without a line
// or slots, its Text its name. At most MaxRanks hosts; a host listed
// twice is refused.
func HostsOfList(source, list string) ([]Host, error) {
	names, err := location.Hostnames(list, MaxRanks)
	if err != nil {
		e := err.(*location.Error)
		e.File = source
		return nil, e
	}
	var hosts []Host
	first := map[string]bool{}
	for _, n := range names {
		if first[location.Key(n)] {
			return nil, &location.Error{File: source, Msg: fmt.Sprintf("host %s twice in the list", quote.String(n))}
		}
		first[location.Key(n)] = true
		hosts = append(hosts, Host{Name: n, Text: n})
	}
	return hosts, nil
}

// LocateJoined gives each host the location entries give it: by its name,
// or by the name the instances files join it to (location.Join), "" when
// none; joined says how each was found, or why not.
func LocateJoined(hosts []Host, entries []location.Entry, files []*location.Instances) (locations []string, joined []location.Joined) {
	byKey := make(map[string]string, len(entries))
	for _, e := range entries {
		byKey[location.Key(e.Host)] = e.Location
	}
	has := func(name string) bool { _, ok := byKey[location.Key(name)]; return ok }
	locations = make([]string, len(hosts))
	joined = make([]location.Joined, len(hosts))
	for i, h := range hosts {
		joined[i] = location.Join(files, h.Name, has)
		if joined[i].Name != "" {
			locations[i] = byKey[location.Key(joined[i].Name)]
		}
	}
	return locations, joined
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
	return WriteHostfile([]string{
		fmt.Sprintf("the hosts of %s in D25's network order (nccom-rings plan --emit-hostfile):", quote.String(source)),
		"rank order of a launcher that keeps this order follows the network",
	}, hosts, order)
}

// WriteHostfile is a hostfile of hosts in order: each comment as a "# "
// line, then each host's line as its file had it (plan --emit-hostfile's
// and ab's hostfiles).
func WriteHostfile(comments []string, hosts []Host, order []int) []byte {
	var b bytes.Buffer
	for _, c := range comments {
		b.WriteString("# " + c + "\n")
	}
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

// TasksPerNode reads Slurm's SLURM_TASKS_PER_NODE form: counts separated
// by commas, each N or N(xK) (K hosts of N), as "32(x16)" or
// "32,16(x2)": one count a host, in the job's host order. Each count in
// [1, MaxRanks], at most MaxRanks hosts.
func TasksPerNode(v string) ([]int, error) {
	var counts []int
	for _, item := range strings.Split(v, ",") {
		n, times := item, "1"
		if i := strings.IndexByte(item, '('); i >= 0 {
			rep, closed := strings.CutSuffix(item[i+1:], ")")
			var ok bool
			times, ok = strings.CutPrefix(rep, "x")
			if !closed || !ok {
				return nil, fmt.Errorf("%s is not N or N(xK)", quote.String(item))
			}
			n = item[:i]
		}
		c, k := slotCount(n), slotCount(times)
		if c == 0 || k == 0 {
			return nil, fmt.Errorf("%s is not N or N(xK) with N and K in [1, %d]", quote.String(item), MaxRanks)
		}
		if len(counts)+k > MaxRanks {
			return nil, fmt.Errorf("more than %d hosts", MaxRanks)
		}
		for range k {
			counts = append(counts, c)
		}
	}
	return counts, nil
}
