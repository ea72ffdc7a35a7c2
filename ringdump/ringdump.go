// Package ringdump is the one definition of the per-rank wiring dump that
// libnccomring writes when NCCOM_RING_DUMP names a directory, and that
// nccom-rings reads. It is pure Go (no cgo) so that the library and the tool
// share the format without a copy of it.
//
// Each rank of a job writes one file into the directory, named by FileName:
//
//	rank-000042.<host>.<pid>.json
//
// (the rank zero-padded to six digits so that names sort by rank; host and
// pid keep files of different processes and hosts apart). Write puts the
// JSON into a new file under a hidden, unpredictable name in the same
// directory and renames it, so a reader sees either no file or a whole
// one, and a link planted under either name is never followed.
//
// The directory may be shared with other users (docs/security.md): the
// writer refuses one they could write into (OpenDir), the reader reads
// regular files only, through a size limit (Read), and neither trusts a
// number inside a file to size its work.
//
// Memory: ReadDir reads each file once, into one buffer that the next file
// reuses (at most MaxFileSize+1 bytes; a smaller one it outgrew, at most
// half that, is garbage until the collector frees it), and keeps of each
// dump what it decodes to: its strings (no more than its file's bytes)
// and 8 bytes for each value of its arrays, at most MaxValues a file (45
// MiB), since a file holding more is refused before it is decoded
// (Decode). So reading takes one file's buffer plus memory proportional
// to the ranks x channels the dumps actually hold, never to a count a
// file claims.
package ringdump

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/internal/safefile"
	"github.com/nccomring/libnccomring/nodeorder"
)

// FormatVersion is the value of every dump's "format" field. A reader
// refuses other values: a change that breaks readers increments it.
const FormatVersion = 1

// Dump is one rank's view of the job after ncclTopoPostset: its rings on
// success, or the failure (Result != 0, Warn set, Wiring nil). All ranks and
// channels are 0-based indices, as the C ABI has them.
type Dump struct {
	Format int `json:"format"` // FormatVersion
	Rank   int `json:"rank"`   // comm->rank
	NRanks int `json:"nRanks"` // comm->nRanks
	// Result is Postset's ncclResult_t (0 on success), ResultName its name
	// ("ncclSuccess"), Warn the text of its WARN line when it failed.
	Result     int    `json:"result"`
	ResultName string `json:"resultName"`
	Warn       string `json:"warn,omitempty"`
	// *Wiring's fields appear at the top level of the JSON; a failed
	// Postset has none of them.
	*Wiring
	// NetDevs are the ncclTopoGetNetDev answers for this rank after the
	// Postset, in the order they were first asked, one per channel.
	NetDevs []NetDev `json:"netDevs,omitempty"`
	Version string   `json:"version"` // libnccomring's version (package version)
	Host    string   `json:"host"`    // the writing process's host name
	PID     int      `json:"pid"`     // and its process id
}

// Wiring is what a successful Postset committed for one rank.
type Wiring struct {
	NNodes int `json:"nNodes"` // *nNodes
	Node   int `json:"node"`   // comm->node, this rank's node index
	// NodesFirstRank holds NNodes entries: each node's channel-0 head.
	NodesFirstRank []int `json:"nodesFirstRank"`
	// GraphChannels is the channel count before doubling (D23), so that
	// channel c >= GraphChannels repeats channel c-GraphChannels (D10).
	GraphChannels int `json:"graphChannels"`
	NChannels     int `json:"nChannels"` // *nChannels: min(2*GraphChannels, 32)
	// Channels holds NChannels entries, in channel order.
	Channels []Channel `json:"channels"`
	// Order is the inter-node order (D25), when this rank asked for the
	// network order or had a location, or some rank asked for it.
	Order *Order `json:"order,omitempty"`
}

// Order is D25 as one rank's Postset saw it: what this rank's own
// gathered record carried (D28: the record's, not the environment's), and
// what Postset decided from every rank's record (the same on every rank).
type Order struct {
	// Asked is the policy this rank's record asks: "network", else
	// "rank" (also when it carries no valid record: Postset then counts
	// it as not asking).
	Asked string `json:"asked"`
	// Location is the location's names, NCCOM_RING_LOCATION as this
	// rank's process held it at Postset, written only when they hash to
	// LocationHashes (D28); "" when there is no location or NameUnknown.
	Location string `json:"location,omitempty"`
	// LocationHashes is the location the record carries, each name's
	// 32-bit FNV-1a hash, outermost first (nodeorder.Hash); none for no
	// location. The tools place nodes by these, never by the names.
	LocationHashes []uint32 `json:"locationHashes,omitempty"`
	// NameUnknown says the record carries a location whose names the
	// environment at Postset did not give (it changed after Preset, or
	// one process played several ranks): D28's "name unknown".
	NameUnknown bool `json:"nameUnknown,omitempty"`
	// FromRecord says Asked and LocationHashes are the rank's own
	// gathered record's. A dump written before D28 lacks it: its
	// Location is NCCOM_RING_LOCATION as set, and Place parses it.
	FromRecord bool `json:"fromRecord,omitempty"`
	Network    bool `json:"network"` // the location order was applied
	// Note is the WARN of a fallback (or of nodes without a location), or
	// the INFO line of a policy not applied; "" when there is none.
	Note string `json:"note,omitempty"`
	// Sequence is the nodes (indices into NodesFirstRank) in the order the
	// stitch joined them, when Network.
	Sequence []int `json:"sequence,omitempty"`
}

// Place is the location the tools place this rank by (D28): the record's
// hashes, or in a dump written before D28 its Location parsed (none when
// it does not parse, as Preset took it). A nil o is no location.
func (o *Order) Place() nodeorder.Location {
	var l nodeorder.Location
	switch {
	case o == nil:
	case o.FromRecord:
		n := min(len(o.LocationHashes), nodeorder.MaxLevels)
		l.Levels = int32(n)
		copy(l.Hash[:], o.LocationHashes[:n])
	default:
		l, _ = nodeorder.Parse(o.Location) // the zero Location on error
	}
	return l
}

// Own is what a rank's dump says of the rank itself: its own gathered
// record (Valid: it is one; Network and Location what it carries) and
// Env, NCCOM_RING_LOCATION as its process held it at Postset ("" unset).
type Own struct {
	Valid, Network bool
	Location       nodeorder.Location
	Env            string
}

// OrderOf is the dump's view of the node order (D25, D28), as the library
// and a planner write it: the rank's own record (own) and what its Postset
// decided (someAsked: some rank's record asked for the network order;
// applied, note and sequence: ring.Order's Network, Warn+Info and
// Sequence). The name is own.Env only when it parses to the record's
// location. nil when neither the record nor the decision says anything.
func OrderOf(own Own, someAsked, applied bool, note string, sequence []int32) *Order {
	if !own.Valid {
		own = Own{}
	}
	if !someAsked && !own.Network && !own.Location.Found() {
		return nil
	}
	o := &Order{Asked: "rank", Network: applied, Note: note, FromRecord: own.Valid}
	if own.Network {
		o.Asked = "network"
	}
	if l := own.Location; l.Found() {
		o.LocationHashes = append([]uint32(nil), l.Hash[:min(l.Levels, nodeorder.MaxLevels)]...)
		if env, err := nodeorder.Parse(own.Env); err == nil && env == l {
			o.Location = own.Env
		} else {
			o.NameUnknown = true
		}
	}
	if len(sequence) > 0 {
		o.Sequence = Ints(sequence)
	}
	return o
}

// Ints is s as the dump's ints.
func Ints(s []int32) []int {
	out := make([]int, len(s))
	for i, v := range s {
		out[i] = int(v)
	}
	return out
}

// Channel is one channel's ring as this rank sees it.
type Channel struct {
	Channel int `json:"channel"`
	Prev    int `json:"prev"`
	Next    int `json:"next"`
	// UserRanks holds NRanks entries: the ring starting at this rank.
	UserRanks []int `json:"userRanks"`
}

// NetDev is one ncclTopoGetNetDev(sys, rank, graph, channel, &dev) answer:
// the NIC this rank uses on the channel.
type NetDev struct {
	Channel int `json:"channel"`
	Dev     int `json:"dev"`
}

// SetNetDev records dev as the answer for channel, replacing an earlier
// answer for the same channel.
func (d *Dump) SetNetDev(channel, dev int) {
	for i := range d.NetDevs {
		if d.NetDevs[i].Channel == channel {
			d.NetDevs[i].Dev = dev
			return
		}
	}
	d.NetDevs = append(d.NetDevs, NetDev{Channel: channel, Dev: dev})
}

// FileName is the name of the dump of rank written by process pid on host:
// "rank-%06d.<host>.<pid>.json", the host with every character other than
// letters, digits, '-' and '_' (a '.' included) replaced by '_', so that
// ParseFileName can split the name at its dots.
func FileName(rank int, host string, pid int) string {
	return fmt.Sprintf("rank-%06d.%s.%d.json", rank, safeHost(host), pid)
}

func safeHost(host string) string {
	if host == "" {
		return "unknown"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, host)
}

// ParseFileName returns the rank, host and pid FileName put into name (a
// base name); ok is false for any other name, hidden temporary files
// included.
func ParseFileName(name string) (rank int, host string, pid int, ok bool) {
	rest, found := strings.CutPrefix(name, "rank-")
	if !found {
		return 0, "", 0, false
	}
	rest, found = strings.CutSuffix(rest, ".json")
	if !found {
		return 0, "", 0, false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return 0, "", 0, false
	}
	rank, err1 := strconv.Atoi(parts[0])
	pid, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || rank < 0 || parts[1] == "" {
		return 0, "", 0, false
	}
	return rank, parts[1], pid, true
}

// Path is where Write puts d in dir.
func Path(dir string, d *Dump) string {
	return filepath.Join(dir, FileName(d.Rank, d.Host, d.PID))
}

// MaxFileSize bounds a dump file: Encode refuses to make a larger one and
// Read to read one (64 MiB: 32 channels of about 260,000 ranks).
const MaxFileSize = 64 << 20

// MaxNetDevs bounds a dump's netDevs: one answer per channel asked, and
// libnccom asks at most 32 (MAXCHANNELS).
const MaxNetDevs = 64

// Write writes d into dir under FileName and returns the file's path: it
// encodes d (Encode), opens dir (CreateDir: created when missing, refused
// when another user could write into it) and writes the file (WriteFile).
// It sets d.Format.
func Write(dir string, d *Dump) (path string, err error) {
	head, tail, err := Encode(d)
	if err != nil {
		return "", err
	}
	fd, err := CreateDir(dir)
	if err != nil {
		return "", err
	}
	defer syscall.Close(fd)
	name := FileName(d.Rank, d.Host, d.PID)
	if err := WriteFile(fd, dir, name, head, AppendNetDevs(nil, d.NetDevs), tail); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// Encode returns the file of d as two parts: the file is head, then
// AppendNetDevs of its netDevs, then tail, so that a writer that keeps
// head and tail can rewrite the file with new netDevs without encoding
// the rest again. It sets d.Format, and refuses (a *SizeError) a dump
// whose file could exceed MaxFileSize, before encoding anything.
func Encode(d *Dump) (head, tail []byte, err error) {
	d.Format = FormatVersion
	if n := sizeBound(d); n > MaxFileSize {
		return nil, nil, &SizeError{Rank: d.Rank, Bytes: n}
	}
	// One line (a 4096-rank dump indented would be mostly blanks), and
	// the WARN text as the log has it: no HTML escaping of "->" or "<rank>",
	// so that grepping a dump for the log's words finds them.
	encode := func(v any) ([]byte, error) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		err := enc.Encode(v) // Encode ends the line
		return buf.Bytes(), err
	}
	body := *d
	body.NetDevs = nil
	all, err := encode(&body)
	if err != nil {
		return nil, nil, err
	}
	last, err := encode(&struct {
		Version string `json:"version"`
		Host    string `json:"host"`
		PID     int    `json:"pid"`
	}{d.Version, d.Host, d.PID})
	if err != nil {
		return nil, nil, err
	}
	// all is {...,"version":...}\n and last {"version":...}\n: the tail
	// is last without its "{", the head what comes before it in all.
	tail = last[1:]
	if !bytes.HasSuffix(all, tail) || len(all) == len(tail) {
		return nil, nil, fmt.Errorf("ringdump: encoding rank %d: the fields after netDevs are not last", d.Rank)
	}
	return all[:len(all)-len(tail)], tail, nil
}

// CheckSize returns the *SizeError Encode would return for a dump of
// nRanks ranks and nChannels channels, or nil: so that a writer can refuse
// one before it gathers the rings (about 8 bytes of memory per int).
func CheckSize(rank, nRanks, nChannels int) error {
	if n := 512 + 21*nRanks + nChannels*(64+21*nRanks); nRanks > MaxFileSize || nChannels > MaxFileSize || n > MaxFileSize {
		return &SizeError{Rank: rank, Bytes: max(n, MaxFileSize+1)}
	}
	return nil
}

// sizeBound is at least the size of d's file: every int takes at most 20
// bytes and a separator; the strings at most 6 bytes a byte (\u00XX).
func sizeBound(d *Dump) int {
	const perInt, perByte = 21, 6
	n := 512 + perByte*(len(d.ResultName)+len(d.Warn)+len(d.Version)+len(d.Host)) + 64*len(d.NetDevs)
	if w := d.Wiring; w != nil {
		n += perInt * len(w.NodesFirstRank)
		for _, c := range w.Channels {
			if len(c.UserRanks) > MaxFileSize {
				return MaxFileSize + 1 // and no overflow below
			}
			n += 64 + perInt*len(c.UserRanks)
			if n > MaxFileSize {
				return n
			}
		}
	}
	return n
}

// SizeError is a dump Encode refuses: its file could exceed MaxFileSize.
type SizeError struct {
	Rank  int
	Bytes int // at least this many
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("the dump of rank %d could take %d bytes, more than the %d MiB a dump may take", e.Rank, e.Bytes, MaxFileSize>>20)
}

// AppendNetDevs appends what the file holds between Encode's head and
// tail for netDevs: nothing when there are none, else
// "netDevs":[{"channel":C,"dev":D},...], (with the comma).
func AppendNetDevs(dst []byte, netDevs []NetDev) []byte {
	if len(netDevs) == 0 {
		return dst
	}
	dst = append(dst, `"netDevs":[`...)
	for i, nd := range netDevs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"channel":`...)
		dst = strconv.AppendInt(dst, int64(nd.Channel), 10)
		dst = append(dst, `,"dev":`...)
		dst = strconv.AppendInt(dst, int64(nd.Dev), 10)
		dst = append(dst, '}')
	}
	return append(dst, "],"...)
}

// DirError is a dump directory refused: another user could replace the
// files in it (docs/security.md), or it is not a directory.
type DirError struct {
	Path   string
	Reason string
}

func (e *DirError) Error() string { return quote.String(e.Path) + " " + e.Reason }

// CreateDir is OpenDir, but a missing dir is created first, its parents
// too, each made 0755 before the umask. The mode of one it made is then
// set to 0755 whatever the umask only where no other user could have put
// another directory under its name (see openDir); no directory it did not
// make has its mode changed.
func CreateDir(dir string) (int, error) { return openDir(dir, true) }

// OpenDir opens dir to write dumps into and returns its descriptor (close
// it with syscall.Close). It is refused (a *DirError) when it or any
// directory on its path is a symbolic link (none is followed), when it is
// not a directory, not owned by the process's effective user, or
// writable by group or others without the sticky bit: there another user
// could plant a link or a file under a dump's name. Nothing is written
// outside the directory opened here: WriteFile works relative to its
// descriptor.
func OpenDir(dir string) (int, error) { return openDir(dir, false) }

// afterMkdir, when set (by tests), is called with a directory's path
// right after openDir created it and before it opens it: where another
// user who can write the parent could swap what lies under the name.
var afterMkdir func(path string)

// openDir opens dir one component at a time, each relative to the
// descriptor of the one before (from "/" or the working directory) with
// O_NOFOLLOW|O_DIRECTORY, so that nothing on the path is looked up again
// after it was checked: a parent another user swaps for a link between
// two steps is refused at the next one, and one swapped after it was
// opened no longer matters. Links on the path are refused rather than
// resolved: following one safely would mean judging who can write each
// directory it leads through, and the operator can name the directory
// without them.
//
// With create, a missing component is made (mkdirat, 0755). Its mode is
// then set to 0755 through its own descriptor, undoing what the umask
// took or a set-group-ID parent added, but only when no other user could
// have put something else under its name between the mkdirat and the
// open (the parent is this user's or root's and nobody else can rename
// in it): otherwise the descriptor might be of someone's own directory,
// moved there, and a directory this call did not create never has its
// mode changed. It keeps the mode the umask gave it then.
func openDir(dir string, create bool) (int, error) {
	start := "."
	if strings.HasPrefix(dir, "/") {
		start = "/"
	}
	fd, err := syscall.Open(start, oPath|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, &FileError{start, err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return -1, &FileError{start, err}
	}
	euid := uint32(os.Geteuid())
	for end := 0; end < len(dir); {
		begin := end
		for begin < len(dir) && dir[begin] == '/' {
			begin++
		}
		end = begin
		for end < len(dir) && dir[end] != '/' {
			end++
		}
		name := dir[begin:end]
		if name == "" || name == "." {
			continue
		}
		// The path as the operator wrote it, up to this component (all
		// of it for the last): what an error names.
		path, last := dir[:end], lastComponent(dir[end:])
		if last {
			path = dir
		}
		next, nst, err := openComponent(fd, &st, path, name, create, euid)
		syscall.Close(fd)
		var de *DirError
		if errors.As(err, &de) && de.Reason == linkReason && !last {
			de.Reason = "is a symbolic link on the dump directory's path: links there are not followed; name the directory without them"
		}
		if err != nil {
			return -1, err
		}
		fd, st = next, nst
	}
	path := dir
	if path == "" {
		path = "."
	}
	switch {
	case st.Uid != euid:
		syscall.Close(fd)
		return -1, &DirError{path, fmt.Sprintf("is owned by uid %d, not by this process's effective uid %d: another user's directory is refused", st.Uid, euid)}
	case st.Mode&0o022 != 0 && st.Mode&syscall.S_ISVTX == 0:
		syscall.Close(fd)
		return -1, &DirError{path, fmt.Sprintf("is writable by group or others without the sticky bit (mode %04o): refused, another user could replace the dumps; chmod go-w or +t", st.Mode&0o7777)}
	}
	return fd, nil
}

// openComponent opens name in the directory parent (whose fstat is pst;
// path is name's whole path, for errors), creating it first with create,
// and returns its descriptor and fstat.
func openComponent(parent int, pst *syscall.Stat_t, path, name string, create bool, euid uint32) (int, syscall.Stat_t, error) {
	var st syscall.Stat_t
	const flags = oPath | syscall.O_DIRECTORY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	fd, err := syscall.Openat(parent, name, flags, 0)
	made := false
	if err == syscall.ENOENT && create {
		switch err = syscall.Mkdirat(parent, name, 0o755); err {
		case nil:
			made = true
		case syscall.EEXIST: // made by someone else in between: open what is there
		default:
			return -1, st, &FileError{path, err}
		}
		if made && afterMkdir != nil {
			afterMkdir(path)
		}
		fd, err = syscall.Openat(parent, name, flags, 0)
	}
	switch {
	case err == syscall.ELOOP || err == syscall.ENOTDIR: // O_DIRECTORY|O_NOFOLLOW on a link: either
		if safefile.IsLinkAt(parent, name) {
			return -1, st, &DirError{path, linkReason}
		}
		return -1, st, &DirError{path, "is not a directory"}
	case err != nil:
		return -1, st, &FileError{path, err}
	}
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return -1, st, &FileError{path, err}
	}
	if made && st.Uid == euid && st.Mode&0o7777 != 0o755 && onlyOwnerRenames(pst, euid) && setMode(fd, 0o755) {
		st.Mode = st.Mode&^0o7777 | 0o755
	}
	return fd, st, nil
}

// oPath is O_PATH (golang.org/x/sys/unix has it for every architecture;
// package syscall on a few only). The components of a dump directory's
// path are opened with it: the descriptor serves the *at calls and fstat,
// and needs only the search permission a path lookup needs, so an
// execute-only directory on the path (a 0711 home) is passed through as
// before.
const oPath = unix.O_PATH

// setMode sets the mode of the directory fd (an O_PATH descriptor, which
// fchmod refuses) through a descriptor of the same directory opened from
// it (".", no name looked up again). It reports whether it did: a
// directory it cannot open or change keeps its mode, and the checks that
// follow judge that one.
func setMode(fd int, mode uint32) bool {
	dfd, err := syscall.Openat(fd, ".", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(dfd)
	return syscall.Fchmod(dfd, mode) == nil
}

const linkReason = "is a symbolic link: a dump directory must not be one"

// lastComponent says whether rest, what follows a component of a path,
// names no further one.
func lastComponent(rest string) bool {
	for _, name := range strings.Split(rest, "/") {
		if name != "" && name != "." {
			return false
		}
	}
	return true
}

// onlyOwnerRenames says whether no user but euid and root can rename or
// replace euid's entries in the directory whose fstat is st: it is
// euid's or root's, and writable by nobody else or sticky.
func onlyOwnerRenames(st *syscall.Stat_t, euid uint32) bool {
	return (st.Uid == euid || st.Uid == 0) && (st.Mode&0o022 == 0 || st.Mode&syscall.S_ISVTX != 0)
}

// WriteFile writes the concatenation of parts as the file name in the
// directory dirfd (OpenDir's; dir is its path, for errors), as
// safefile.WriteAt does: into a new file under an unpredictable hidden
// name, created exclusively (no link or file already there is opened),
// then renamed over name, which replaces whatever name was (a link, a
// FIFO) without following or opening it. A reader sees either the old
// file or the new one, never part of one. A failure leaves no temporary
// file behind; its error names the path.
func WriteFile(dirfd int, dir, name string, parts ...[]byte) error {
	err := safefile.WriteAt(dirfd, name, 0o644, parts...)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &FileError{filepath.Join(dir, pe.Path), pe.Err}
	}
	return err
}

// FileError is a file or directory that could not be used, with its path
// (printed quoted: it may come from another user's directory).
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return quote.String(e.Path) + ": " + e.Err.Error() }

func (e *FileError) Unwrap() error { return e.Err }

// pathError is err about path as a *FileError, without the path the os
// package put into its text.
func pathError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &FileError{path, err}
}

// FormatError is a dump file that is not a dump: bad JSON or an unknown
// format version. Offset is encoding/json's: the bytes read when decoding
// failed, so the 1-based position of the offending byte (the file's length
// for a truncated file); -1 when unknown.
type FormatError struct {
	Path   string
	Offset int64
	Err    error
}

func (e *FormatError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%s: not a ring dump: at byte %d: %v", quote.String(e.Path), e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: not a ring dump: %v", quote.String(e.Path), e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// Read reads one dump file: a regular file of at most MaxFileSize bytes.
// A symbolic link, a FIFO, a device or a directory is refused without
// being followed, read or waited on, as is a larger file, before anything
// is read. Its errors are a *FileError or a *FormatError.
func Read(path string) (*Dump, error) {
	d, _, err := readInto(nil, path)
	return d, err
}

// readInto reads and decodes the dump file path, reading it into buf's
// array when it fits, else into a new, larger one; it returns the buffer
// it used, for the next file. The buffer is never larger than
// MaxFileSize+1 bytes, and the dump keeps nothing of it (encoding/json
// copies what it decodes).
func readInto(buf []byte, path string) (*Dump, []byte, error) {
	f, fi, err := safefile.Open(path, safefile.NoLinks)
	if err != nil {
		return nil, buf, pathError(path, err)
	}
	defer f.Close()
	if fi.Size() > MaxFileSize {
		return nil, buf, &FileError{path, fmt.Errorf("is %d bytes, more than the %d MiB a dump may have", fi.Size(), MaxFileSize>>20)}
	}
	// One byte more than the file had when it was opened, so that a file
	// that grows is seen to; the buffer grows with it up to the limit.
	// A buffer that must grow at least doubles, and one past half the
	// limit is made the limit's size at once, so that a directory of
	// files just under it, each a byte longer than the last, shares one.
	if want := int(fi.Size()) + 1; cap(buf) < want {
		want = max(want, 2*cap(buf))
		if want > MaxFileSize/2 {
			want = MaxFileSize + 1
		}
		buf = make([]byte, want)
	}
	buf = buf[:cap(buf)]
	n := 0
	for {
		if n == len(buf) {
			if n > MaxFileSize {
				return nil, buf, &FileError{path, fmt.Errorf("grew past the %d MiB a dump may have while it was read", MaxFileSize>>20)}
			}
			buf = append(buf, make([]byte, min(n, MaxFileSize+1-n))...)
			buf = buf[:cap(buf)]
		}
		m, err := f.Read(buf[n:])
		n += m
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, buf, pathError(path, err)
		}
	}
	if n > MaxFileSize {
		return nil, buf, &FileError{path, fmt.Errorf("grew past the %d MiB a dump may have while it was read", MaxFileSize>>20)}
	}
	d, err := Decode(path, buf[:n])
	return d, buf, err
}

// MaxValues bounds what one dump decodes to: a file whose arrays and
// objects hold more values than this (counted as the commas outside its
// strings) is refused before it is decoded. A dump Encode writes holds at
// most (MaxFileSize-512)/21 ints in its wiring (sizeBound) and an order
// sequence no longer than its nodes, at least three times fewer (every
// node has a rank in each of at least two channels): about 4.3 million
// values in all, under MaxValues (5.6 million). So a decoded dump holds
// at most MaxValues ints, 8 bytes each (45 MiB), and strings no larger
// than its file, however its 64 MiB are spent: "0," 32 million times once
// decoded to 256 MiB of ints, and three such files took 1.9 GB (issue 34).
const MaxValues = MaxFileSize / 12

// countValues is the commas in data outside JSON strings, counted up to
// limit+1: at least the values of its arrays and objects, less one each.
func countValues(data []byte, limit int) int {
	n, inString := 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString && c == '\\':
			i++ // the escaped byte
		case c == '"':
			inString = !inString
		case c == ',' && !inString:
			if n++; n > limit {
				return n
			}
		}
	}
	return n
}

// Decode parses data, the contents of the dump file path (used in errors
// only). Data holding more than MaxValues values is refused (a
// *FormatError) before it is decoded.
func Decode(path string, data []byte) (*Dump, error) {
	if countValues(data, MaxValues) > MaxValues {
		return nil, &FormatError{Path: path, Offset: -1, Err: fmt.Errorf("holds more than %d values (commas outside strings), more than a dump the library writes can hold", MaxValues)}
	}
	d := new(Dump)
	if err := json.Unmarshal(data, d); err != nil {
		offset := int64(-1)
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntax):
			offset = syntax.Offset
		case errors.As(err, &typ):
			offset = typ.Offset
		}
		return nil, &FormatError{Path: path, Offset: offset, Err: err}
	}
	if d.Format != FormatVersion {
		return nil, &FormatError{Path: path, Offset: -1, Err: fmt.Errorf("format %d, this reader knows format %d", d.Format, FormatVersion)}
	}
	return d, nil
}

// File is one dump read from a directory.
type File struct {
	Path string
	Dump *Dump
}

// ReadDir reads every dump file in dir (the names FileName makes; other
// names, the temporary files among them, are skipped), sorted by rank,
// then path. A dump-named entry that cannot be read or is not a dump (Read:
// a link, a FIFO, a file too large or not JSON) is left out and its error
// is one of bad, in name order, so that a reader can go on with the rest;
// err is about dir itself. The work is the entries present: nothing is
// sized by a number inside a file.
func ReadDir(dir string) (files []File, bad []error, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, pathError(dir, err)
	}
	var buf []byte // one file's, reused: the largest file's size
	for _, e := range entries {
		if _, _, _, ok := ParseFileName(e.Name()); !ok {
			continue
		}
		path := filepath.Join(dir, e.Name())
		var d *Dump
		d, buf, err = readInto(buf, path)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		files = append(files, File{Path: path, Dump: d})
	}
	sort.SliceStable(files, func(i, j int) bool {
		if files[i].Dump.Rank != files[j].Dump.Rank {
			return files[i].Dump.Rank < files[j].Dump.Rank
		}
		return files[i].Path < files[j].Path
	})
	return files, bad, nil
}
