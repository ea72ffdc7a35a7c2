package location

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
)

// An instances file joins the names a hostfile or a dump gives a host to
// the names a topology gives it (an EC2 instance id, a Slurm node name, a
// Kubernetes node name, a capacity reservation id). It is one of
//
//   - the JSON of `aws ec2 describe-instances` (ParseDescribeInstances):
//     an instance is named by its InstanceId, PrivateDnsName,
//     PrivateIpAddress and "Name" tag, and runs in its
//     CapacityReservationId;
//   - the output of `scontrol show nodes` (ParseScontrolNodes): a node
//     is named by its NodeName, NodeHostName, NodeAddr and InstanceId;
//   - the JSON of `kubectl get pods -o json` (ParsePods): a pod is named
//     by metadata.name and status.podIP, and runs on spec.nodeName
//     (status.hostIP);
//   - a map of "HOST INSTANCE" lines (ParseInstanceMap): both names
//     name one host;
//
// told apart by their content (ParseInstances). Names are compared by Key.
// A name that two records of one file give (a "Name" tag every instance
// has, say) names neither: joining by it is ambiguous, and Join says so.

// Kinds of instances file.
const (
	KindDescribeInstances = "describe-instances"
	KindScontrolNodes     = "scontrol show nodes"
	KindPods              = "kubectl get pods"
	KindMap               = "HOST INSTANCE map"
)

// Instances is one instances file.
type Instances struct {
	Kind    string
	File    string
	Records []Record
	// Truncated: the last describe-instances page has a NextToken.
	Truncated bool

	byKey map[string]keyRecords // Key(name) of Names -> the records giving it
}

// Record is one host (or pod) of an instances file.
type Record struct {
	// Names name this host, its most specific first (an instance id
	// before a DNS name, an address, a tag).
	Names []string
	// Where names where it runs, shared with other records: an
	// instance's capacity reservation, a pod's node. Join follows them
	// but does not find a record by them.
	Where []string
	Line  int // the line that names it first
}

// keyRecords is the records of a file that give one name: the first
// two, and how many.
type keyRecords struct {
	first, second int32
	count         int32
}

// MaxInstances bounds the records of an instances file: each costs a
// few hundred bytes of index (a million took 470 MB), and a cluster's
// file, even a region's describe-instances, holds far fewer.
const MaxInstances = 200_000

// add adds r (its names checked by the caller); it refuses more than
// MaxInstances records.
func (in *Instances) add(r Record) error {
	if len(in.Records) == MaxInstances {
		return &Error{File: in.File, Line: r.Line, Msg: fmt.Sprintf("more than %d hosts: name only the cluster's (aws ec2 describe-instances --filters, kubectl get pods -l, scontrol show nodes NODELIST)", MaxInstances)}
	}
	if in.byKey == nil {
		in.byKey = make(map[string]keyRecords)
	}
	i := int32(len(in.Records))
	var keys [8]string // of the names kept: a record has a few
	n := 0
	r.Names, n = keepNames(r.Names, &keys, n)
	nNames := n
	r.Where, _ = keepNames(r.Where, &keys, n)
	for _, k := range keys[:nNames] {
		kr, ok := in.byKey[k]
		switch {
		case !ok:
			kr = keyRecords{first: i, second: -1, count: 1}
		case kr.count == 1:
			kr.second, kr.count = i, 2
		default:
			kr.count++
		}
		in.byKey[k] = kr
	}
	in.Records = append(in.Records, r)
	return nil
}

// keepNames drops the empty names of list and those whose Key is among
// keys[:n] or another's before it, and any past len(keys); it adds the
// keys of those it keeps.
func keepNames(list []string, keys *[8]string, n int) ([]string, int) {
	kept := list[:0:0]
	for _, name := range list {
		if name == "" || n == len(keys) {
			continue
		}
		k := Key(name)
		if slices.Contains(keys[:n], k) {
			continue
		}
		keys[n] = k
		n++
		kept = append(kept, name)
	}
	return kept, n
}

// Find is the record whose Names give name (by Key): its index and how
// many records give it (0: none; more than 1: ambiguous, the index the
// first's).
func (in *Instances) Find(name string) (index, count int) {
	kr, ok := in.byKey[Key(name)]
	if !ok {
		return -1, 0
	}
	return int(kr.first), int(kr.count)
}

// Joined is where Join took a host.
type Joined struct {
	// Name is the name has accepted: the host's own, or one a record
	// joins it to; "" when none.
	Name string
	File string // the instances file of the record that gave Name; "" for the host's own
	Line int    // that record's line
	// Reason says why there is no Name.
	Reason string
	// Shared: the join went through a name records share (a pod's node,
	// an instance's capacity reservation), so two hosts joined to one
	// Name may be two machines; otherwise hosts joined to one Name are
	// one machine under several names.
	Shared bool
	// Same names the machine the host is: the first name of each record
	// reached through the host's own names (not through a shared one),
	// and Name when not Shared. Two hosts whose Same share a name (by
	// Key) are one machine under two names.
	Same []string
}

// Join finds the name of host that has accepts (a topology's or a
// locations file's): host itself, else the names of the record that
// names host in one of files, and of the records those names name in
// turn (a pod's node in a describe-instances file, a Slurm node's address
// in another), nearest first, each record's names in its order (an
// instance id before its reservation). A name two records of one file
// give joins nothing (Reason says so when nothing else is found), unless
// every record giving it joins to the same name (a hostNetwork pod and
// kube-proxy sharing the node's address, say): records that agree are
// not ambiguous.
func Join(files []*Instances, host string, has func(name string) bool) Joined {
	if has(host) {
		return Joined{Name: host, Same: []string{host}}
	}
	if why := disagree(files, host); why != "" {
		return Joined{Reason: why}
	}
	j := join(files, []string{host}, nil, nil, has, true)
	if j.Name != "" && !j.Shared {
		j.Same = append(j.Same, j.Name)
	}
	// Each name once, by Key, in the order found.
	var same []string
	keys := map[string]bool{}
	for _, n := range j.Same {
		if !keys[Key(n)] {
			keys[Key(n)] = true
			same = append(same, n)
		}
	}
	j.Same = same
	return j
}

// disagree says how two files give host different instances (a stale
// map beside describe-instances, say), "" when they do not: either
// instance would be a guess, so the host joins neither. Two records of
// one file giving host are Join's ambiguity, not this.
func disagree(files []*Instances, host string) string {
	var first string // "FILE gives INSTANCE (line N)"
	var id string
	for _, f := range files {
		i, n := f.Find(host)
		if n != 1 {
			continue
		}
		r := f.Records[i]
		for _, name := range r.Names {
			if !IsInstanceID(name) {
				continue
			}
			this := fmt.Sprintf("%s gives %s (line %d)", fileName(f.File), clip(name), r.Line)
			switch {
			case id == "":
				id, first = Key(name), this
			case Key(name) != id:
				return fmt.Sprintf("the instances files disagree: %s, %s, so it joins neither", first, this)
			}
			break
		}
	}
	return ""
}

// maxAgree bounds the records of a name Join follows one by one to see
// whether they agree.
const maxAgree = 16

type fileRecord struct{ file, record int }

// join is Join's search from the names queue (visited: records already
// followed); resolve says whether a name several records give is
// followed record by record (once: not within that); shared, when not
// nil, says which of queue were reached through a Where.
func join(files []*Instances, queue []string, shared []bool, visited map[fileRecord]bool, has func(name string) bool, resolve bool) Joined {
	seen := map[string]bool{}
	for _, n := range queue {
		seen[Key(n)] = true
	}
	if visited == nil {
		visited = map[fileRecord]bool{}
	}
	if shared == nil {
		shared = make([]bool, len(queue)) // queue[q] was reached through a Where
	}
	var ambiguous, unlisted string
	var same []string
	for q := 0; q < len(queue); q++ {
		for fi, f := range files {
			i, n := f.Find(queue[q])
			if n == 0 {
				continue
			}
			if n > 1 {
				if resolve {
					if j, ok := f.agree(files, fi, queue[q], visited, has); ok {
						j.Shared = j.Shared || shared[q]
						if shared[q] {
							j.Same = nil
						}
						j.Same = append(same, j.Same...)
						return j
					}
				}
				if ambiguous == "" {
					ambiguous = fmt.Sprintf("%s names %d hosts of %s (lines %d and %d), so it joins none", clip(queue[q]), n, fileName(f.File), f.Records[i].Line, f.Records[f.byKey[Key(queue[q])].second].Line)
				}
				continue
			}
			if visited[fileRecord{fi, i}] {
				continue
			}
			visited[fileRecord{fi, i}] = true
			r := f.Records[i]
			if !shared[q] {
				same = append(same, r.Names[0])
			}
			for li, list := range [][]string{r.Names, r.Where} {
				for _, name := range list {
					if seen[Key(name)] {
						continue
					}
					seen[Key(name)] = true
					if has(name) {
						return Joined{Name: name, File: f.File, Line: r.Line, Shared: shared[q] || li == 1, Same: same}
					}
					queue, shared = append(queue, name), append(shared, shared[q] || li == 1)
				}
			}
			if unlisted == "" {
				if f.Kind == KindPods && len(r.Where) == 0 {
					unlisted = fmt.Sprintf("%s names pod %s (line %d), which is not scheduled: it has no spec.nodeName", fileName(f.File), clip(r.Names[0]), r.Line)
				} else {
					unlisted = fmt.Sprintf("%s joins it to %s (line %d), which the locations do not list", fileName(f.File), strings.Join(clipAll(append(r.Names, r.Where...)), ", "), r.Line)
				}
			}
		}
	}
	// Same, as far as it got: two hosts the locations do not list may
	// still be one machine.
	switch {
	case unlisted != "":
		return Joined{Reason: unlisted, Same: same}
	case ambiguous != "":
		return Joined{Reason: ambiguous, Same: same}
	case len(files) == 0:
		return Joined{Reason: "not listed"}
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = fileName(f.File)
	}
	return Joined{Reason: "not listed, and not named in " + strings.Join(names, " or ")}
}

// agree follows each record of f (files[fi]) that gives name, at most
// maxAgree of them: when each joins to a name and all to the same one
// (by Key), that join, else false.
func (f *Instances) agree(files []*Instances, fi int, name string, visited map[fileRecord]bool, has func(name string) bool) (Joined, bool) {
	kr := f.byKey[Key(name)]
	if kr.count > maxAgree {
		return Joined{}, false
	}
	var got Joined
	var same []string
	found := 0
	for i := int(kr.first); i < len(f.Records) && found < int(kr.count); i++ {
		r := f.Records[i]
		if !slices.ContainsFunc(r.Names, func(n string) bool { return Key(n) == Key(name) }) {
			continue
		}
		found++
		same = append(same, r.Names[0])
		v := map[fileRecord]bool{{fi, i}: true}
		for k := range visited {
			v[k] = true
		}
		var j Joined
		for li, list := range [][]string{r.Names, r.Where} {
			for _, n := range list {
				if j.Name == "" && Key(n) != Key(name) && has(n) {
					j = Joined{Name: n, File: f.File, Line: r.Line, Shared: li == 1}
				}
			}
		}
		if j.Name == "" {
			var queue []string
			var shared []bool
			for li, list := range [][]string{r.Names, r.Where} {
				for _, n := range list {
					if Key(n) != Key(name) {
						queue, shared = append(queue, n), append(shared, li == 1)
					}
				}
			}
			j = join(files, queue, shared, v, has, false)
		}
		if j.Name == "" || found > 1 && Key(j.Name) != Key(got.Name) {
			return Joined{}, false
		}
		same = append(same, j.Same...)
		if found == 1 {
			got = j
		}
	}
	got.Same = same
	return got, found > 0
}

func fileName(f string) string {
	if f == "" {
		return "input"
	}
	return displayName(f)
}

// clipAll clips each of names (at most 4 of them, then "...").
func clipAll(names []string) []string {
	var out []string
	for i, n := range names {
		if i == 4 {
			return append(out, "...")
		}
		out = append(out, clip(n))
	}
	return out
}

// ReadInstancesFile reads the instances file at path (ReadFile's limits
// and checks): ParseInstances.
func ReadInstancesFile(path string) (*Instances, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseInstances(path, data)
}

// ParseInstances reads an instances file of any kind, told apart by its
// content: JSON (its first byte past blanks '{' or '[') is
// describe-instances' or kubectl's, by the keys of its documents; a file
// whose first line that is not blank starts with "NodeName=" is
// scontrol's; any other a map. A UTF-8 byte-order mark is skipped.
func ParseInstances(file string, data []byte) (*Instances, error) {
	if len(data) > MaxFileSize {
		return nil, tooBig(file, int64(len(data)))
	}
	rest := bytes.TrimLeft(bytes.TrimPrefix(data, bom), " \t\r\n")
	switch {
	case len(rest) > 0 && (rest[0] == '{' || rest[0] == '['):
		return parseInstancesJSON(file, data, "")
	case bytes.HasPrefix(rest, []byte("NodeName=")):
		// scontrol's lines are told apart by their indent, so its mark is
		// cut (ParseScontrolNodes), not made blanks: columns of its first
		// line count from after the mark.
		return ParseScontrolNodes(file, data)
	}
	return ParseInstanceMap(file, BlankBOM(data))
}

// ParseInstanceMap reads "HOST INSTANCE" lines: two names of one host a
// line, separated by blanks, '#' comments and blank lines anywhere (the
// locations file's syntax, with a second name for its location). A name
// on two lines is an error.
func ParseInstanceMap(file string, data []byte) (*Instances, error) {
	in := &Instances{Kind: KindMap, File: file}
	br := bytes.NewReader(data)
	lines := newLineReader(br)
	for line := 1; ; line++ {
		text, err := lines.next()
		if err == errLongLine {
			return nil, longLine(file, line)
		}
		if i := bytes.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields, cols := splitBlanks(text)
		switch {
		case len(fields) == 0:
		case len(fields) != 2:
			at := min(len(fields), 2)
			col := len(text) + 1
			if at < len(fields) {
				col = cols[at]
			}
			return nil, &Error{File: file, Line: line, Col: col, Msg: fmt.Sprintf("HOST INSTANCE expected: two names of one host a line, not %d fields", len(fields))}
		default:
			for i, f := range fields {
				if strings.IndexByte(f, '/') >= 0 && i == 1 {
					return nil, &Error{File: file, Line: line, Col: cols[i], Msg: fmt.Sprintf("%s is a location, not a name: this is a locations file (HOST LOCATION); pass it with --locations", clip(f))}
				}
				if err := CheckHost(f); err != nil {
					return nil, &Error{File: file, Line: line, Col: cols[i], Msg: err.Error()}
				}
				if j, n := in.Find(f); n > 0 {
					return nil, &Error{File: file, Line: line, Col: cols[i], Msg: fmt.Sprintf("%s again; first on line %d", clip(f), in.Records[j].Line)}
				}
				if i == 1 && Key(f) == Key(fields[0]) {
					return nil, &Error{File: file, Line: line, Col: cols[i], Msg: fmt.Sprintf("%s again; first on line %d", clip(f), line)}
				}
			}
			if err := in.add(Record{Names: fields, Line: line}); err != nil {
				return nil, err
			}
		}
		if err != nil { // io.EOF
			return in, nil
		}
	}
}

// splitBlanks splits text at blanks (spaces, tabs): its fields and the
// 1-based byte each begins at.
func splitBlanks(text []byte) (fields []string, cols []int) {
	for i := 0; i < len(text); {
		if isBlank(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && !isBlank(text[j]) {
			j++
		}
		fields, cols = append(fields, string(text[i:j])), append(cols, i+1)
		i = j
	}
	return fields, cols
}

// lineReader reads lines of at most MaxLine bytes (readLine).
type lineReader struct {
	br  *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next is the next line without its end; err is io.EOF with the last
// line, errLongLine past MaxLine bytes.
func (l *lineReader) next() ([]byte, error) {
	text, err := readLine(l.br, l.buf[:0])
	l.buf = text
	return text, err
}
