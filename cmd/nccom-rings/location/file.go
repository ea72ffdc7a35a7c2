package location

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/nccomring/libnccomring/nodeorder"
)

// The locations file is what `nccom-rings locate --all` writes and every
// tool of the project reads (ReadLocations): one host a line,
//
//	# comment
//	HOST LOCATION       # a comment may end a line too
//
// HOST and LOCATION separated by blanks (spaces or tabs), blanks allowed
// around them, blank lines and '#' comments anywhere. HOST is 1 to
// MaxHostName bytes of [A-Za-z0-9._:-]: an EC2 instance id, a node name,
// or what the reading tool documents (a node index for ringstage).
// LOCATION is what nodeorder.Parse accepts. A host appears once (hosts
// are compared by Key). Lines end in "\n" or "\r\n"; a line is at most
// MaxLine bytes, the file at most MaxFileSize bytes and MaxHosts hosts.

// Entry is one line of a locations file.
type Entry struct {
	Host     string `json:"host"`
	Location string `json:"location"`
	Line     int    `json:"line"`
}

// ReadLocations reads a locations file from r, its entries in file order.
// An error is an *Error with the line and byte (its File empty; see
// ReadLocationsFile).
func ReadLocations(r io.Reader) ([]Entry, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var entries []Entry
	first := make(map[string]int) // Key(host) -> line
	var total int64
	var buf []byte
	for line := 1; ; line++ {
		text, err := readLine(br, buf[:0])
		buf = text
		total += int64(len(text))
		if err == nil {
			total++ // its "\n"
		}
		switch {
		case err == errLongLine:
			return nil, longLine("", line)
		case total > MaxFileSize:
			return nil, &Error{Line: line, Msg: fmt.Sprintf("the file has more than the %d MiB a file may have", MaxFileSize>>20)}
		case err != nil && err != io.EOF:
			return nil, &Error{Line: line, Msg: err.Error()}
		}
		if line == 1 {
			text = BlankBOM(text)
		}
		if len(text) > 0 || err == nil {
			e, col, ok, perr := parseLocationLine(text, line)
			if perr != nil {
				return nil, perr
			}
			if ok {
				k := Key(e.Host)
				if at, dup := first[k]; dup {
					return nil, &Error{Line: line, Col: col, Msg: fmt.Sprintf("host %s again; first on line %d", clip(e.Host), at)}
				}
				if len(entries) == MaxHosts {
					return nil, &Error{Line: line, Msg: fmt.Sprintf("more than %d hosts", MaxHosts)}
				}
				first[k] = line
				entries = append(entries, e)
			}
		}
		if err == io.EOF {
			return entries, nil
		}
	}
}

// Locate gives each of names the location entries give it, matched by
// Key (lowercase, up to the first dot), "" when none; missing lists the
// indices of the names without one. The one matching of hosts to a
// locations file, for every tool that takes one.
func Locate(names []string, entries []Entry) (locations []string, missing []int) {
	byKey := make(map[string]string, len(entries))
	for _, e := range entries {
		byKey[Key(e.Host)] = e.Location
	}
	locations = make([]string, len(names))
	for i, name := range names {
		loc, ok := byKey[Key(name)]
		if !ok {
			missing = append(missing, i)
		}
		locations[i] = loc
	}
	return locations, missing
}

// ReadLocationsFile reads the locations file at path (ReadFile's limits
// and checks), its errors naming the file.
func ReadLocationsFile(path string) ([]Entry, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	entries, err := ReadLocations(bytes.NewReader(data))
	if e, ok := err.(*Error); ok {
		e.File = path
	}
	return entries, err
}

var errLongLine = fmt.Errorf("line too long")

// longLine is the error for line of file, which readLine found longer
// than MaxLine.
func longLine(file string, line int) *Error {
	return &Error{File: file, Line: line, Msg: fmt.Sprintf("the line has more than the %d KiB a line may have", MaxLine>>10)}
}

// readLine reads one line without its "\n" (and the '\r' before it) into
// buf; err is io.EOF at the end of the input (text then holds the last
// line, if it did not end in "\n"), errLongLine past MaxLine bytes.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLine+2 { // + "\r\n"
			return buf, errLongLine
		}
		buf = append(buf, chunk...)
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			buf = bytes.TrimSuffix(buf[:len(buf)-1], []byte{'\r'})
			if len(buf) > MaxLine {
				return buf, errLongLine
			}
			return buf, nil
		default:
			if len(buf) > MaxLine {
				return buf, errLongLine
			}
			return buf, err
		}
	}
}

// parseLocationLine reads one line; col is the byte its host begins at,
// ok is false for a blank or comment line.
func parseLocationLine(text []byte, line int) (e Entry, col int, ok bool, err error) {
	if i := bytes.IndexByte(text, '#'); i >= 0 {
		text = text[:i]
	}
	fields, cols := splitBlanks(text)
	switch {
	case len(fields) == 0:
		return Entry{}, 0, false, nil
	case len(fields) == 1:
		return Entry{}, 0, false, &Error{Line: line, Col: len(text) + 1, Msg: "HOST LOCATION expected: a location after the host"}
	case len(fields) > 2:
		return Entry{}, 0, false, &Error{Line: line, Col: cols[2], Msg: fmt.Sprintf("%s after HOST LOCATION; a line holds two fields", clip(fields[2]))}
	}
	host, loc := fields[0], fields[1]
	if err := CheckHost(host); err != nil {
		return Entry{}, 0, false, &Error{Line: line, Col: cols[0], Msg: err.Error()}
	}
	if _, err := nodeorder.Parse(loc); err != nil {
		return Entry{}, 0, false, &Error{Line: line, Col: cols[1], Msg: "not a location: " + err.Error()}
	}
	return Entry{Host: host, Location: loc, Line: line}, cols[0], true, nil
}
