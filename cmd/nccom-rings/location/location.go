// Package location finds where hosts sit in the network, as the
// NCCOM_RING_LOCATION values of D25 (package nodeorder), from the files
// operators already have: the JSON of EC2's DescribeInstanceTopology
// (ParseEC2) and DescribeCapacityReservationTopology
// (ParseEC2Reservation), of kubectl get nodes (ParseK8s: EKS's and
// Topograph's labels), what Slurm says (ParseSlurm: a topology.conf of
// the topology/tree or topology/block plugin, a topology.yaml, scontrol
// show topology's output) and a Slurm task's SLURM_TOPOLOGY_ADDR
// (FromSlurmEnv); Detect tells the files apart by content. It also reads and defines the locations file every tool of
// the project reads (ReadLocations): one "HOST LOCATION" line per host.
// Pure Go; the library itself reads no file, only its tools use this.
//
// Every parser is strict and bounded: a file is refused whole, with an
// *Error naming the file, the line, the byte of the line and what was
// expected, rather than read in part. Limits:
//
//   - MaxFileSize bytes in any file (ReadFile refuses larger ones, and
//     Open, which streams a file such as plan --graph's, refuses them
//     before a byte is read and fails a read that goes past);
//   - MaxLine bytes in a line of a topology.conf (with its continuations)
//     or of a locations file; the EC2 JSON has no line limit (boto3 and
//     jq -c write it on one line), only MaxDepth levels of nesting;
//   - MaxHosts host and switch names in a file once its hostlists are
//     expanded (instances, reservations or nodes in a JSON file), and
//     MaxSwitches switches in a topology.conf;
//   - MaxNameBytes bytes for those names, as a list is sized before it is
//     expanded: each expr's names times its longest name (a list whose
//     longest name is over the limit of a name is refused then too), so
//     the memory names take stays within MaxNameBytes whatever a line
//     asks for;
//   - a host name is 1 to MaxHostName bytes of [A-Za-z0-9._:-]; a switch
//     name or network node id is a location name (1 to nodeorder.MaxName
//     bytes of the same), and a host's chain at most nodeorder.MaxLevels
//     long.
//
// Host names are compared by Key: in lowercase, up to the first dot, so
// "trn001.ec2.internal" is "TRN001"; an IP address is compared whole.
package location

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/internal/safefile"
	"github.com/nccomring/libnccomring/nodeorder"
)

// Limits of the parsers (see the package comment).
const (
	MaxFileSize = 64 << 20  // bytes in a file
	MaxLine     = 64 << 10  // bytes in a line
	MaxHosts    = 1_000_000 // names in a file, hostlists expanded
	MaxSwitches = 65_536    // switches in a topology.conf
	MaxHostName = 255       // bytes in a host name
	// MaxNameBytes bounds the bytes of a topology.conf's expanded names:
	// each list's exprs' names times their longest name, summed.
	MaxNameBytes = 64 << 20
	MaxDepth     = 64 // nesting of JSON arrays and objects
)

// Error is a file that cannot be used: which file, which line and byte of
// the line (0 when not about one), and what is wrong or was expected.
type Error struct {
	File string // as the caller named it; "" when unknown
	Line int    // 1-based; 0: the whole file
	Col  int    // 1-based byte of the line; 0: the whole line
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(displayName(e.File))
	} else {
		b.WriteString("input")
	}
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Col > 0 {
			b.WriteString(":" + strconv.Itoa(e.Col))
		}
	}
	return b.String() + ": " + e.Msg
}

// displayName is a file name as an error shows it: as given when it is
// plain printable ASCII without spaces or quotes, else quoted, so that a
// name cannot forge a line or hide a character.
func displayName(name string) string {
	for i := range len(name) {
		if c := name[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return quote.String(name)
		}
	}
	return name
}

// clip quotes an untrusted value for a message, at most 40 bytes of it.
func clip(s string) string {
	const max = 40
	if len(s) > max {
		return quote.String(s[:max]) + "..."
	}
	return quote.String(s)
}

// Key is how host names are compared: lowercase, up to the first dot;
// an IP address whole, in its canonical form (10.0.0.5 is not host "10").
func Key(name string) string {
	if maybeAddr(name) {
		if a, err := netip.ParseAddr(name); err == nil {
			return a.String()
		}
	}
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	return strings.ToLower(name)
}

// maybeAddr reports whether name may be an IP address: an IPv4 one
// starts with a digit, an IPv6 one holds ':' (ParseAddr's error costs an
// allocation, and Key is called for every name of every file).
func maybeAddr(name string) bool {
	return name != "" && ('0' <= name[0] && name[0] <= '9' || strings.IndexByte(name, ':') >= 0)
}

// CheckHost reports what is wrong with a host name, or nil: 1 to
// MaxHostName bytes of [A-Za-z0-9._:-] (the rule for every reader's host
// names, and plan's hostfile), saying which byte.
func CheckHost(name string) error {
	if len(name) == 0 || len(name) > MaxHostName {
		return fmt.Errorf("host name %s has %d bytes; 1 to %d", clip(name), len(name), MaxHostName)
	}
	if i := badNameByte(name); i >= 0 {
		return fmt.Errorf("host name %s has %s at byte %d; only A-Z a-z 0-9 . _ : -", clip(name), quote.String(name[i:i+1]), i+1)
	}
	return nil
}

// checkName reports what is wrong with one name of a location (a switch
// name, a network node id), or nil: what nodeorder.Parse accepts as one
// name.
func checkName(what, name string) error {
	if i := strings.IndexByte(name, '/'); i >= 0 {
		return fmt.Errorf("%s %s has '/' at byte %d; a location name holds only A-Z a-z 0-9 . _ : -", what, clip(name), i+1)
	}
	if _, err := nodeorder.Parse(name); err != nil {
		return fmt.Errorf("%s is not a location name: %v", what, err)
	}
	return nil
}

// badNameByte is the index of the first byte of s outside
// [A-Za-z0-9._:-], or -1.
func badNameByte(s string) int {
	for i := range len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return i
		}
	}
	return -1
}

// Topology is what a file says about where its hosts sit.
type Topology struct {
	Source string // "ec2" or "slurm"
	File   string // the name the file was read under
	Hosts  []Host // every host of the file once, in the order it first appears
	// Truncated: the last EC2 page has a NextToken, so the file lacks
	// the instances of the pages after it.
	Truncated bool
	// Reason says why the file places no host, when it says so itself
	// (a flat topology of a topology.yaml, a pattern of SLURM_TOPOLOGY_ADDR
	// without switches).
	Reason string

	byKey map[string]int // Key(name) -> index in Hosts, and of each alias
	// aliases holds the keys of byKey that are aliases, not host names;
	// shared, the aliases that hosts of different locations share (two
	// reservations of one Capacity Block): Lookup gives them no location.
	aliases map[string]bool
	shared  map[string]Host
}

// Host is one host of a Topology.
type Host struct {
	Name     string // as the file spells it: an EC2 instance id, a Slurm node name
	Location string // outermost name first, '/'-separated; "" when Reason says why there is none
	Line     int    // the line that places it: its InstanceId, or its leaf switch's line
	Reason   string // why the host has no location, when it has none
}

// Lookup finds the host whose Key is name's. An alias that hosts of
// different locations share finds a Host of that name without a
// location, whose Reason names both.
func (t *Topology) Lookup(name string) (Host, bool) {
	if h, ok := t.shared[Key(name)]; ok {
		return h, true
	}
	i, ok := t.byKey[Key(name)]
	if !ok {
		return Host{}, false
	}
	return t.Hosts[i], true
}

// grow makes room for n more hosts: a reader that knows how many names
// its file gives (a million from one Slurm host list) builds the index
// once instead of through every doubling, whose discarded copies held
// a 1,000,000-name topology.conf at 635 MB resident instead of 290.
func (t *Topology) grow(n int) {
	if t.byKey == nil {
		t.byKey = make(map[string]int, n)
	}
	t.Hosts = slices.Grow(t.Hosts, n)
}

// add appends h unless a host of its key is there already; it returns the
// index of the host with h's key.
func (t *Topology) add(h Host) (index int, added bool) {
	if t.byKey == nil {
		t.byKey = make(map[string]int)
	}
	k := Key(h.Name)
	if i, ok := t.byKey[k]; ok {
		return i, false
	}
	t.byKey[k] = len(t.Hosts)
	t.Hosts = append(t.Hosts, h)
	return len(t.Hosts) - 1, true
}

// alias makes name find the host at index i too (a node's instance id, a
// reservation's Capacity Block), unless a host has its key already. An
// alias that another host holds finds the first when both have one
// location, and no location when they differ: either would be a guess.
func (t *Topology) alias(name string, i int) {
	k := Key(name)
	j, ok := t.byKey[k]
	switch {
	case !ok:
		t.byKey[k] = i
		if t.aliases == nil {
			t.aliases = map[string]bool{}
		}
		t.aliases[k] = true
	case !t.aliases[k] || j == i || t.shared[k].Name != "":
	case t.Hosts[j].Location == t.Hosts[i].Location && t.Hosts[i].Location != "":
	default:
		at := func(h Host) string {
			if h.Location == "" {
				return fmt.Sprintf("%s (line %d, no location)", clip(h.Name), h.Line)
			}
			return fmt.Sprintf("%s (line %d) at %s", clip(h.Name), h.Line, h.Location)
		}
		if t.shared == nil {
			t.shared = map[string]Host{}
		}
		t.shared[k] = Host{Name: name, Line: t.Hosts[j].Line,
			Reason: fmt.Sprintf("%s names two hosts of different locations, %s and %s, so it has no single location", clip(name), at(t.Hosts[j]), at(t.Hosts[i]))}
	}
}

// bom is the UTF-8 byte-order mark, which every reader accepts at the
// start of a file (editors on Windows write it).
var bom = []byte{0xef, 0xbb, 0xbf}

// BlankBOM is data with its byte-order mark, if any, made three blanks,
// so that lines and bytes are counted as in the file: a copy then, never
// data itself changed.
func BlankBOM(data []byte) []byte {
	if !bytes.HasPrefix(data, bom) {
		return data
	}
	c := make([]byte, len(data))
	copy(c, data)
	copy(c, "   ")
	return c
}

// fileData is data, of a file a reader was given, with its byte-order
// mark blanked (BlankBOM); a file of more than MaxFileSize bytes is
// refused.
func fileData(file string, data []byte) ([]byte, error) {
	if len(data) > MaxFileSize {
		return nil, tooBig(file, int64(len(data)))
	}
	return BlankBOM(data), nil
}

// tooBig is the error for a file of size bytes, more than MaxFileSize;
// a size below 0 is one not known (more was read than a file may have).
func tooBig(file string, size int64) *Error {
	if size < 0 {
		return &Error{File: file, Msg: fmt.Sprintf("has more than the %d MiB a file may have", MaxFileSize>>20)}
	}
	return &Error{File: file, Msg: fmt.Sprintf("has %d bytes, more than the %d MiB a file may have", size, MaxFileSize>>20)}
}

// ReadFile reads the file at path whole: a regular file (or a pipe, for
// "-", standard input) of at most MaxFileSize bytes, under
// internal/safefile's rules. Symbolic links are followed: the operator
// names the file.
func ReadFile(path string) ([]byte, error) {
	if path == "-" {
		data, err := readBounded("-", os.Stdin)
		if err != nil {
			return nil, err
		}
		return data, checkUTF8("-", data)
	}
	data, err := safefile.Read(path, safefile.FollowLinks, MaxFileSize)
	var big *safefile.TooBigError
	switch {
	case errors.As(err, &big):
		return nil, tooBig(path, big.Size)
	case err != nil:
		return nil, &Error{File: path, Msg: openReason(err)}
	}
	return data, checkUTF8(path, data)
}

// checkUTF8 refuses a file saved as UTF-16 (a byte-order mark FF FE or
// FE FF, or NUL bytes, as Windows editors and PowerShell's redirection
// write it): every reader of this package reads UTF-8 text, and would
// otherwise report UTF-16's bytes as a syntax error of its own.
func checkUTF8(path string, data []byte) error {
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) || bytes.IndexByte(data, 0) >= 0 {
		return &Error{File: path, Msg: "UTF-16 (or NUL bytes): save it as UTF-8"}
	}
	return nil
}

// Open opens the file at path to be read as a stream, under ReadFile's
// rules and limit: a file of more than MaxFileSize bytes is refused
// before a byte is read, and one that grows past it while it is read
// fails the Read that goes past (with an *Error), so a reader that
// streams the file never holds more than it chooses to. "-" is standard
// input (not closed by Close).
func Open(path string) (io.ReadCloser, error) {
	if path == "-" {
		return &boundedReader{r: io.LimitReader(os.Stdin, MaxFileSize+1), c: io.NopCloser(nil), name: "-"}, nil
	}
	f, fi, err := safefile.Open(path, safefile.FollowLinks)
	if err != nil {
		return nil, &Error{File: path, Msg: openReason(err)}
	}
	if fi.Size() > MaxFileSize {
		f.Close()
		return nil, tooBig(path, fi.Size())
	}
	return &boundedReader{r: io.LimitReader(f, MaxFileSize+1), c: f, name: path}, nil
}

// boundedReader fails once more than MaxFileSize bytes are read.
type boundedReader struct {
	r    io.Reader // limited to MaxFileSize+1 bytes
	c    io.Closer
	name string
	read int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += int64(n)
	if b.read > MaxFileSize {
		return n - int(b.read-MaxFileSize), tooBig(b.name, -1)
	}
	return n, err
}

func (b *boundedReader) Close() error { return b.c.Close() }

// readBounded reads r to its end, refusing more than MaxFileSize bytes.
func readBounded(name string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, &Error{File: name, Msg: err.Error()}
	}
	if len(data) > MaxFileSize {
		return nil, tooBig(name, -1)
	}
	return data, nil
}

func openReason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, syscall.ENOENT) {
		return "no such file"
	}
	return err.Error()
}

// DMIAssetTag is where a Nitro EC2 instance exposes its instance id (the
// DMI board asset tag).
const DMIAssetTag = "/sys/devices/virtual/dmi/id/board_asset_tag"

// ReadInstanceID reads this instance's id from the DMI board asset tag at
// path (DMIAssetTag): a regular file, not a symbolic link, of at most 4096
// bytes, holding "i-" and 8 or 17 lowercase hex digits (and a newline).
// The error says to pass the id instead.
func ReadInstanceID(path string) (string, error) {
	const limit = 4096
	fail := func(why string) error {
		return &Error{File: path, Msg: why + "; pass this instance's id with --instance"}
	}
	data, err := safefile.Read(path, safefile.NoLinks, limit)
	var big *safefile.TooBigError
	switch {
	case errors.Is(err, syscall.ENOENT):
		return "", fail("no such file: not an EC2 Nitro instance, or /sys is not mounted")
	case errors.As(err, &big):
		return "", fail(fmt.Sprintf("has more than %d bytes", limit))
	case err != nil:
		return "", fail(openReason(err))
	}
	id := strings.TrimRight(string(data), "\n\r\t ")
	if !IsInstanceID(id) {
		return "", fail(fmt.Sprintf("holds %s, not an EC2 instance id (i- and 8 or 17 hex digits): not a Nitro instance?", clip(id)))
	}
	return id, nil
}

// IsInstanceID reports whether s is an EC2 instance id: "i-" and 8 or 17
// lowercase hex digits.
func IsInstanceID(s string) bool {
	hex, ok := strings.CutPrefix(s, "i-")
	if !ok || len(hex) != 8 && len(hex) != 17 {
		return false
	}
	for i := range len(hex) {
		if c := hex[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
