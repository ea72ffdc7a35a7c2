package location

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/nccomring/libnccomring/nodeorder"
)

// ParseEC2 reads the JSON of EC2's DescribeInstanceTopology (data, read
// from file) and returns where each instance sits: its NetworkNodes, top
// layer first, joined by '/' (nn-1111/nn-2222/nn-3333).
//
// The file holds one response as the AWS CLI prints it ({"Instances":
// [...], "NextToken": ...}), several such pages one after another, or a
// JSON array of pages. Only Instances[].InstanceId and
// Instances[].NetworkNodes are read, with their names exactly so; other
// keys (InstanceType, GroupName, AvailabilityZone, ZoneId,
// CapacityBlockId, ...) are skipped. A page without Instances, an
// instance without InstanceId, an instance listed twice, a key twice in
// one object, more than nodeorder.MaxLevels network nodes, or an id that
// is not a location name are errors. An instance whose NetworkNodes is
// absent, null or empty is kept without a location (Reason says so);
// fewer layers than its neighbours' is a location like any other. The
// response has no host names: hosts are its instance ids.
func ParseEC2(file string, data []byte) (*Topology, error) {
	return parseEC2(file, data, &instanceTopology)
}

// ec2Kind is what one of EC2's topology responses calls its parts.
type ec2Kind struct {
	source string // Topology.Source
	api    string // the operation
	list   string // the key of the array of elements
	id     string // the key of an element's id
	alias  string // the key of another id that finds it ("" for none)
	what   string // an element, in a message
	none   string // why an element without NetworkNodes has no location
}

var instanceTopology = ec2Kind{
	source: "ec2", api: "DescribeInstanceTopology", list: "Instances", id: "InstanceId", what: "instance",
	none: "EC2 gave no NetworkNodes for it (an instance type without topology, or not yet known)",
}

// parseEC2 reads the responses of kind's operation.
func parseEC2(file string, data []byte, kind *ec2Kind) (*Topology, error) {
	data, err := fileData(file, data)
	if err != nil {
		return nil, err
	}
	r := &ec2Reader{file: file, data: data, dec: json.NewDecoder(bytes.NewReader(data)), kind: kind}
	r.dec.UseNumber()
	t := &Topology{Source: kind.source, File: file}
	pages, err := r.objects(
		fmt.Sprintf("a %s response (an object with %q, or an array of them)", kind.api, kind.list),
		fmt.Sprintf("a %s response (an object with %q)", kind.api, kind.list),
		"the responses",
		func(at int) error { return r.page(t, at) })
	if err != nil {
		return nil, err
	}
	if pages == 0 {
		return nil, &Error{File: file, Msg: fmt.Sprintf("no %s response in the file ({%q: [...]} expected)", kind.api, kind.list)}
	}
	return t, nil
}

type ec2Reader struct {
	file  string
	data  []byte
	dec   *json.Decoder
	depth int // of arrays and objects opened by skip
	lines lineCursor
	kind  *ec2Kind
	// keepLabel: which of a Kubernetes node's labels ParseK8s keeps.
	keepLabel func(string) bool
}

// lineCursor turns byte offsets of data into line and column by one scan
// that moves forward: the offsets the reader asks about grow with the
// decoder's (InputOffset), so each byte is looked at once, not once per
// instance as a count from the start would (issue 34, F2: a one-line file
// of 2.4 MB took minutes). An offset before the cursor, which only an
// error asks for, scans again from the start, once.
type lineCursor struct {
	off       int // scanned up to here
	line      int // 1-based line of off
	lineStart int // offset of that line's first byte
}

// at is the 1-based line and byte of the line of data[off].
func (c *lineCursor) at(data []byte, off int) (line, col int) {
	if c.line == 0 || off < c.off {
		*c = lineCursor{line: 1}
	}
	for {
		i := bytes.IndexByte(data[c.off:off], '\n')
		if i < 0 {
			break
		}
		c.line++
		c.lineStart = c.off + i + 1
		c.off = c.lineStart
	}
	c.off = off
	return c.line, off - c.lineStart + 1
}

// next is the offset of the next token: past the blanks and the one ':'
// or ',' the decoder has yet to read.
func (r *ec2Reader) next() int {
	off := int(r.dec.InputOffset())
	blanks := func() {
		for off < len(r.data) && strings.IndexByte(" \t\r\n", r.data[off]) >= 0 {
			off++
		}
	}
	blanks()
	if off < len(r.data) && (r.data[off] == ':' || r.data[off] == ',') {
		off++
		blanks()
	}
	return off
}

// objects reads a file of JSON objects, each alone or in an array, one
// after another to its end, and says how many there were. each reads one
// whose '{', at byte at, has been read. A token that begins neither is
// refused as not what (or, in an array, inArray) expected; anything past
// the last, as not the end of the file after them (after: "the
// responses").
func (r *ec2Reader) objects(what, inArray, after string, each func(at int) error) (int, error) {
	n := 0
	for r.dec.More() {
		at := r.next()
		tok, err := r.token()
		if err != nil {
			return 0, err
		}
		switch tok {
		case json.Delim('{'):
			if err := each(at); err != nil {
				return 0, err
			}
			n++
		case json.Delim('['):
			for r.dec.More() {
				at := r.next()
				if tok, err := r.token(); err != nil {
					return 0, err
				} else if tok != json.Delim('{') {
					return 0, r.errAt(at, "%s expected in the array, not %s", inArray, describe(tok))
				}
				if err := each(at); err != nil {
					return 0, err
				}
				n++
			}
			if _, err := r.token(); err != nil { // ']'
				return 0, err
			}
		default:
			return 0, r.errAt(at, "%s expected, not %s", what, describe(tok))
		}
	}
	return n, r.end(after)
}

// end refuses anything but blanks after the last value of the file;
// after names what came before, for the error.
func (r *ec2Reader) end(after string) error {
	at := r.next()
	if _, err := r.dec.Token(); err != io.EOF {
		if err == nil {
			return r.errAt(at, "the end of the file expected after %s", after)
		}
		return r.syntax(at, err)
	}
	return nil
}

// errAt is an error at byte off of the file.
func (r *ec2Reader) errAt(off int, format string, args ...any) *Error {
	line, col := r.lines.at(r.data, min(off, len(r.data)))
	return &Error{File: r.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// syntax turns the decoder's error about the token at byte at into one
// at its line. (A SyntaxError's Offset counts from the start of the value
// for some errors, so it is not used.)
func (r *ec2Reader) syntax(at int, err error) *Error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return r.errAt(at, "not JSON: %s", se.Error())
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return r.errAt(len(r.data), "the file ends inside a JSON value")
	}
	return &Error{File: r.file, Msg: err.Error()}
}

func (r *ec2Reader) token() (json.Token, error) {
	at := r.next()
	tok, err := r.dec.Token()
	if err != nil {
		return nil, r.syntax(at, err)
	}
	return tok, nil
}

// article is what with "a" or "an" before it.
func article(what string) string {
	if strings.IndexByte("aeiouAEIOU", what[0]) >= 0 {
		return "an " + what
	}
	return "a " + what
}

// describe names a token for a message.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return "the string " + clip(v)
	case json.Number:
		return "the number " + clip(v.String())
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a value"
}

// skip reads the value whose first token is tok, refusing more than
// MaxDepth levels of nesting.
func (r *ec2Reader) skip(tok json.Token, at int) error {
	if tok != json.Delim('{') && tok != json.Delim('[') {
		return nil
	}
	base := r.depth
	for {
		if tok == json.Delim('{') || tok == json.Delim('[') {
			if r.depth++; r.depth > MaxDepth {
				return r.errAt(at, "JSON nested more than %d levels deep", MaxDepth)
			}
		} else if tok == json.Delim('}') || tok == json.Delim(']') {
			if r.depth--; r.depth == base {
				return nil
			}
		}
		at = r.next()
		var err error
		if tok, err = r.token(); err != nil {
			return err
		}
	}
}

// member is an object's member as far as its value's first token.
type member struct {
	key     string
	at      int        // the key's byte
	valueAt int        // the value's first byte
	tok     json.Token // the value's first token
}

// members reads an object whose '{' has been read, up to and with its
// '}': each member as far as its value's first token (the loop reads the
// rest of the value), or the error that ends the loop.
func (r *ec2Reader) members() iter.Seq2[member, error] {
	return func(yield func(member, error) bool) {
		for {
			m, ok, err := r.member()
			if err != nil {
				yield(member{}, err)
				return
			}
			if !ok || !yield(m, nil) {
				return
			}
		}
	}
}

// member reads the next member of an object as far as its value's first
// token; ok is false at the object's '}', which is read.
func (r *ec2Reader) member() (m member, ok bool, err error) {
	if !r.dec.More() {
		_, err := r.token() // '}'
		return member{}, false, err
	}
	m.at = r.next()
	tok, err := r.token()
	if err != nil {
		return member{}, false, err
	}
	m.key = tok.(string) // the decoder gives only strings as keys
	m.valueAt = r.next()
	if m.tok, err = r.token(); err != nil {
		return member{}, false, err
	}
	return m, true, nil
}

// page reads a response whose '{' at start has been read.
func (r *ec2Reader) page(t *Topology, start int) error {
	var instances, nextToken bool
	for m, err := range r.members() {
		if err != nil {
			return err
		}
		switch m.key {
		case r.kind.list:
			if instances {
				return r.errAt(m.at, "%q twice in one response", r.kind.list)
			}
			instances = true
			if m.tok != json.Delim('[') {
				return r.errAt(m.valueAt, "%q must be an array of %ss, not %s", r.kind.list, r.kind.what, describe(m.tok))
			}
			for r.dec.More() {
				if len(t.Hosts) == MaxHosts {
					return r.errAt(r.next(), "more than %d %ss in the file", MaxHosts, r.kind.what)
				}
				if err := r.instance(t); err != nil {
					return err
				}
			}
			if _, err := r.token(); err != nil { // ']'
				return err
			}
		case "NextToken":
			if nextToken {
				return r.errAt(m.at, "\"NextToken\" twice in one response")
			}
			nextToken = true
			s, isString := m.tok.(string)
			if !isString && m.tok != nil {
				return r.errAt(m.valueAt, "\"NextToken\" must be a string or null, not %s", describe(m.tok))
			}
			t.Truncated = s != ""
		default:
			if err := r.skip(m.tok, m.valueAt); err != nil {
				return err
			}
		}
	}
	if !instances {
		return r.errAt(start, "a response without %q: not the output of %s", r.kind.list, r.kind.api)
	}
	if !nextToken {
		t.Truncated = false
	}
	return nil
}

// instance reads one element of Instances.
func (r *ec2Reader) instance(t *Topology) error {
	start := r.next()
	tok, err := r.token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return r.errAt(start, "%s (an object with %q and \"NetworkNodes\") expected, not %s", article(r.kind.what), r.kind.id, describe(tok))
	}
	var id, alias string
	idAt, aliasAt := -1, -1
	var nodes []string
	nodesAt := -1
	for m, err := range r.members() {
		if err != nil {
			return err
		}
		switch m.key {
		case r.kind.id:
			if idAt >= 0 {
				return r.errAt(m.at, "%q twice in one %s", r.kind.id, r.kind.what)
			}
			s, isString := m.tok.(string)
			if !isString {
				return r.errAt(m.valueAt, "%q must be a string, not %s", r.kind.id, describe(m.tok))
			}
			if err := CheckHost(s); err != nil {
				return r.errAt(m.valueAt, "%q: %v", r.kind.id, err)
			}
			id, idAt = s, m.valueAt
		case r.kind.alias:
			if r.kind.alias == "" {
				if err := r.skip(m.tok, m.valueAt); err != nil {
					return err
				}
				continue
			}
			if aliasAt >= 0 {
				return r.errAt(m.at, "%q twice in one %s", r.kind.alias, r.kind.what)
			}
			aliasAt = m.valueAt
			s, isString := m.tok.(string)
			if !isString && m.tok != nil {
				return r.errAt(m.valueAt, "%q must be a string or null, not %s", r.kind.alias, describe(m.tok))
			}
			if s != "" {
				if err := CheckHost(s); err != nil {
					return r.errAt(m.valueAt, "%q: %v", r.kind.alias, err)
				}
			}
			alias = s
		case "NetworkNodes":
			if nodesAt >= 0 {
				return r.errAt(m.at, "\"NetworkNodes\" twice in one instance")
			}
			nodesAt = m.valueAt
			if m.tok == nil {
				continue
			}
			if m.tok != json.Delim('[') {
				return r.errAt(m.valueAt, "\"NetworkNodes\" must be an array of network node ids, top layer first, not %s", describe(m.tok))
			}
			for r.dec.More() {
				nat := r.next()
				tok, err := r.token()
				if err != nil {
					return err
				}
				s, isString := tok.(string)
				if !isString {
					return r.errAt(nat, "a network node id (a string) expected, not %s", describe(tok))
				}
				if len(nodes) == nodeorder.MaxLevels {
					return r.errAt(m.valueAt, "\"NetworkNodes\" has more than %d ids; a location holds at most %d names", nodeorder.MaxLevels, nodeorder.MaxLevels)
				}
				if err := checkName("the network node id", s); err != nil {
					return r.errAt(nat, "%v", err)
				}
				nodes = append(nodes, s)
			}
			if _, err := r.token(); err != nil { // ']'
				return err
			}
		default:
			if err := r.skip(m.tok, m.valueAt); err != nil {
				return err
			}
		}
	}
	if idAt < 0 {
		return r.errAt(start, "%s without %q", article(r.kind.what), r.kind.id)
	}
	line, _ := r.lines.at(r.data, idAt)
	h := Host{Name: id, Location: strings.Join(nodes, "/"), Line: line}
	if len(nodes) == 0 {
		h.Reason = r.kind.none
	}
	i, added := t.add(h)
	if !added {
		return r.errAt(idAt, "%s %s is listed again; first on line %d", r.kind.what, clip(id), t.Hosts[i].Line)
	}
	if alias != "" {
		t.alias(alias, i)
	}
	return nil
}
