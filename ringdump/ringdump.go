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
// JSON into a hidden temporary name in the same directory and renames it,
// so a reader sees either no file or a whole one.
package ringdump

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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

// Write writes d into dir (created with mode 0755 if missing) under
// FileName, through a temporary file ".<name>.tmp" in dir and a rename,
// and returns the file's path. It sets d.Format. A failure leaves no
// temporary file behind and returns an error naming the path.
func Write(dir string, d *Dump) (path string, err error) {
	d.Format = FormatVersion
	// One line (a 4096-rank dump indented would be mostly blanks), and
	// the WARN text as the log has it: no HTML escaping of "->" or "<rank>",
	// so that grepping a dump for the log's words finds them.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil { // Encode ends the line
		return "", err
	}
	data := buf.Bytes()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path = Path(dir, d)
	tmp := filepath.Join(dir, "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return path, nil
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
		return fmt.Sprintf("%s: not a ring dump: at byte %d: %v", e.Path, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: not a ring dump: %v", e.Path, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// Read reads one dump file. Its errors are the file system's, or a
// *FormatError.
func Read(path string) (*Dump, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(path, data)
}

// Decode parses data, the contents of the dump file path (used in errors
// only).
func Decode(path string, data []byte) (*Dump, error) {
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
// files and the temporary ones are skipped), sorted by rank, then path. The
// first unreadable or malformed file is the error.
func ReadDir(dir string) ([]File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []File
	for _, e := range entries {
		if _, _, _, ok := ParseFileName(e.Name()); !ok || e.Type()&fs.ModeType != 0 {
			continue
		}
		path := filepath.Join(dir, e.Name())
		d, err := Read(path)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: path, Dump: d})
	}
	sort.SliceStable(files, func(i, j int) bool {
		if files[i].Dump.Rank != files[j].Dump.Rank {
			return files[i].Dump.Rank < files[j].Dump.Rank
		}
		return files[i].Path < files[j].Path
	})
	return files, nil
}
