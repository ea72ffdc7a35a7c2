package location

import (
	"bytes"
	"fmt"
)

// ParseScontrolNodes reads the output of `scontrol show nodes` (or
// `scontrol -o show nodes`, a node a line): each node's record starts on
// a line that begins with "NodeName=" and goes on in the indented lines
// after it, "KEY=VALUE" words separated by blanks (a value may hold
// blanks, as OS= does: the words after it without '=' are its own). The
// node is named by NodeName, NodeHostName, NodeAddr and, where slurmd was
// given one (as recent ParallelCluster releases do), InstanceId; the other keys
// are skipped, and "(null)", "N/A" and "None" are no name. A node listed
// twice, one of those keys twice in one record, or a line that is
// neither a record's first nor indented is an error.
//
// The format, from Slurm's scontrol(1) and a ParallelCluster example
// (aws/aws-parallelcluster-cookbook#2876):
//
//	NodeName=queue-on-demand-dy-compute-resource-2-2 Arch=x86_64 CoresPerSocket=1
//	   NodeAddr=192.168.127.110 NodeHostName=queue-on-demand-dy-compute-resource-2-2 Version=24.05.2
//	   OS=Linux 5.10.233-224.894.amzn2.x86_64 #1 SMP Mon Jan 27 16:52:48 UTC 2025
//	   InstanceId=i-0eb8d995282xxxx11 InstanceType=c5.xlarge
func ParseScontrolNodes(file string, data []byte) (*Instances, error) {
	in := &Instances{Kind: KindScontrolNodes, File: file}
	first := map[string]int{} // Key(NodeName) -> line
	var cur *Record
	var fields map[string]bool // keys of cur read so far
	var values [4]string       // NodeName, NodeHostName, NodeAddr, InstanceId
	flush := func() error {
		if cur == nil {
			return nil
		}
		cur.Names = append(cur.Names[:0], values[:]...)
		err := in.add(*cur)
		cur = nil
		return err
	}
	lines := newLineReader(bytes.NewReader(bytes.TrimPrefix(data, bom)))
	for line := 1; ; line++ {
		text, err := lines.next()
		if err == errLongLine {
			return nil, longLine(file, line)
		}
		words, cols := splitBlanks(text)
		switch {
		case len(words) == 0:
		case !isBlank(text[0]) && !bytes.HasPrefix(text, []byte("NodeName=")):
			return nil, &Error{File: file, Line: line, Col: 1, Msg: "a node's record begins with NodeName= (the output of scontrol show nodes), its other lines indented"}
		case cur == nil && isBlank(text[0]):
			return nil, &Error{File: file, Line: line, Col: cols[0], Msg: "an indented line before any NodeName= line"}
		}
		for i, w := range words {
			key, value, ok := cutKey(w)
			if !ok {
				continue // a word of the value before it
			}
			slot := -1
			switch key {
			case "NodeName":
				if err := flush(); err != nil {
					return nil, err
				}
				cur, fields, values = &Record{Line: line}, map[string]bool{}, [4]string{}
				slot = 0
			case "NodeHostName":
				slot = 1
			case "NodeAddr":
				slot = 2
			case "InstanceId":
				slot = 3
			}
			if slot < 0 {
				continue
			}
			if fields[key] {
				return nil, &Error{File: file, Line: line, Col: cols[i], Msg: fmt.Sprintf("%s= twice in the record of node %s", key, clip(values[0]))}
			}
			fields[key] = true
			switch value {
			case "(null)", "N/A", "None", "":
				if slot == 0 {
					return nil, &Error{File: file, Line: line, Col: cols[i], Msg: "a NodeName= without a name"}
				}
				continue
			}
			if err := CheckHost(value); err != nil {
				return nil, &Error{File: file, Line: line, Col: cols[i] + len(key) + 1, Msg: key + ": " + err.Error()}
			}
			if slot == 0 {
				if at, dup := first[Key(value)]; dup {
					return nil, &Error{File: file, Line: line, Col: cols[i], Msg: fmt.Sprintf("node %s again; first on line %d", clip(value), at)}
				}
				first[Key(value)] = line
			}
			values[slot] = value
		}
		if err != nil { // io.EOF
			if err := flush(); err != nil {
				return nil, err
			}
			if len(in.Records) == 0 {
				return nil, &Error{File: file, Msg: "no NodeName= record (the output of scontrol show nodes expected)"}
			}
			return in, nil
		}
	}
}

// cutKey splits a word "KEY=VALUE" whose KEY is letters, digits and '_'
// (starting with a letter); ok is false for any other word.
func cutKey(w string) (key, value string, ok bool) {
	i := 0
	for i < len(w) && ('a' <= w[i] && w[i] <= 'z' || 'A' <= w[i] && w[i] <= 'Z' || i > 0 && ('0' <= w[i] && w[i] <= '9' || w[i] == '_')) {
		i++
	}
	if i == 0 || i == len(w) || w[i] != '=' {
		return "", "", false
	}
	return w[:i], w[i+1:], true
}
