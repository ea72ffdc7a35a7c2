package location

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/nodeorder"
)

// MaxYAMLSize bounds a topology.yaml, checked before it is parsed: its
// names are host lists (node[001-128]), so a real one is a few KiB, and a
// YAML tree takes some 200 bytes a scalar, so 1 MiB of them stays within
// a few hundred MB at worst.
const MaxYAMLSize = 1 << 20

// ParseSlurmYAML reads a Slurm topology.yaml (Slurm 25.05 on: a list of
// topologies, each "topology: NAME", "cluster_default: BOOL" and one of
// tree, block, flat, ring or torus3d) and returns where the hosts of one
// of its topologies sit: the one named name, else the first whose
// cluster_default is true (else the only one).
//
// A tree ("switches": [{switch, children, nodes}]) gives each host the
// chain of switches from the top switch down to its leaf, as a
// topology.conf of SwitchName= lines does; a block ("blocks": [{block,
// nodes}], "block_sizes") gives each host its block's name (one level).
// A flat topology places no host (Topology.Reason says so). A ring or a
// torus3d is refused, naming the kind: ring positions and torus
// coordinates are not a hierarchy of groups, so there is no outermost
// first name to give.
//
// Bounded before and while parsing: at most MaxYAMLSize bytes; no
// aliases or anchors (refused where met; Slurm's own file has no use for
// them, and an alias is how a small YAML grows into a billion nodes); the
// YAML library's own limit of 10000 levels of nesting, and only the keys
// above are read, each at its one depth. Names are host lists, expanded
// under the limits of a topology.conf.
func ParseSlurmYAML(file string, data []byte, name string) (*Topology, error) {
	if len(data) > MaxYAMLSize {
		return nil, &Error{File: file, Msg: fmt.Sprintf("has %d bytes, more than the %d MiB a topology.yaml may have", len(data), MaxYAMLSize>>20)}
	}
	return parseSlurmYAML(file, data, name, MaxHosts)
}

func parseSlurmYAML(file string, data []byte, name string, maxHosts uint64) (*Topology, error) {
	y := yamlReader{p: slurmParser{file: file, byName: make(map[string]int), maxHosts: maxHosts}, lines: bytes.Count(data, []byte{'\n'}) + 1}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Msg: "an empty YAML document: not a topology.yaml"}
		}
		return nil, y.syntax(err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); err == nil {
		return nil, &Error{File: file, Line: more.Line, Msg: "a second YAML document: a topology.yaml is one list of topologies"}
	} else if !errors.Is(err, io.EOF) {
		return nil, y.syntax(err)
	}
	top := &doc
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	if err := y.plain(top, "a topology.yaml"); err != nil {
		return nil, err
	}
	if top.Kind != yaml.SequenceNode {
		return nil, y.at(top, "a topology.yaml is a list of topologies (\"- topology: NAME\"), not %s", kindOf(top))
	}
	type entry struct {
		name  string
		node  *yaml.Node // the topology's mapping
		kind  *yaml.Node // the key of its kind
		value *yaml.Node // the kind's value
	}
	var all []entry
	chosen, fallback := -1, -1
	for _, t := range top.Content {
		if err := y.plain(t, "a topology"); err != nil {
			return nil, err
		}
		if t.Kind != yaml.MappingNode || len(t.Content) == 0 {
			return nil, y.at(t, "a topology (a mapping whose first key is \"topology\") expected, not %s", kindOf(t))
		}
		e := entry{node: t}
		isDefault := false
		for i := 0; i < len(t.Content); i += 2 {
			k, v := t.Content[i], t.Content[i+1]
			if err := y.plain(k, "a key"); err != nil {
				return nil, err
			}
			if err := y.plain(v, "a value"); err != nil {
				return nil, err
			}
			if i == 0 && k.Value != "topology" {
				return nil, y.at(k, "\"topology: NAME\" must be a topology's first key, not %s", clip(k.Value))
			}
			switch k.Value {
			case "topology":
				if i != 0 {
					return nil, y.at(k, "\"topology\" twice in one topology")
				}
				if v.Kind != yaml.ScalarNode || v.Value == "" {
					return nil, y.at(v, "a topology's name is a string, not %s", kindOf(v))
				}
				e.name = v.Value
			case "cluster_default":
				b, err := strconv.ParseBool(v.Value)
				if v.Kind != yaml.ScalarNode || err != nil {
					return nil, y.at(v, "cluster_default is true or false, not %s", clip(v.Value))
				}
				isDefault = b
			case "tree", "block", "flat", "ring", "torus3d":
				if e.kind != nil {
					return nil, y.at(k, "topology %s has both %s and %s: a topology has one kind", clip(e.name), e.kind.Value, k.Value)
				}
				e.kind, e.value = k, v
			default:
				return nil, y.at(k, "unknown key %s in topology %s; a topology has topology, cluster_default and one of tree, block, flat, ring, torus3d", clip(k.Value), clip(e.name))
			}
		}
		if e.kind == nil {
			return nil, y.at(t, "topology %s has no kind: one of tree, block, flat, ring, torus3d", clip(e.name))
		}
		for _, o := range all {
			if o.name == e.name {
				return nil, y.at(t, "topology %s is defined again; first on line %d", clip(e.name), o.node.Line)
			}
		}
		if name != "" && e.name == name {
			chosen = len(all)
		}
		if isDefault && fallback < 0 {
			fallback = len(all)
		}
		all = append(all, e)
	}
	names := make([]string, len(all))
	for i, e := range all {
		names[i] = e.name
	}
	switch {
	case len(all) == 0:
		return nil, y.at(top, "no topology in the list")
	case name != "" && chosen < 0:
		return nil, &Error{File: file, Msg: fmt.Sprintf("no topology %s; the file has %s", clip(name), strings.Join(names, ", "))}
	case name != "":
	case fallback >= 0:
		chosen = fallback
	case len(all) == 1:
		chosen = 0
	default:
		return nil, &Error{File: file, Msg: fmt.Sprintf("no topology has cluster_default: true, so which one to read is not said: name one with --topology (%s)", strings.Join(names, ", "))}
	}
	e := all[chosen]
	t := &Topology{Source: "slurm", File: file}
	switch e.kind.Value {
	case "flat":
		t.Reason = fmt.Sprintf("topology %s is flat (topology/flat): every node is as near as any other, so no host has a location", clip(e.name))
		return t, nil
	case "ring":
		return nil, y.at(e.kind, "topology %s is a ring (topology/ring): its nodes sit in rings, in order, not in groups within groups, so a location (outermost group first) cannot say where they sit; name a tree or block topology with --topology", clip(e.name))
	case "torus3d":
		return nil, y.at(e.kind, "topology %s is a torus3d (topology/torus3d): its nodes have coordinates in a 3-D torus, not groups within groups, so a location (outermost group first) cannot say where they sit; name a tree or block topology with --topology", clip(e.name))
	case "tree":
		if err := y.tree(e.value); err != nil {
			return nil, err
		}
	case "block":
		y.p.blocks = true
		if err := y.block(e.value); err != nil {
			return nil, err
		}
	}
	return y.p.finish()
}

// looksLikeSlurmYAML reports whether data's first line that is not blank
// or a comment starts a YAML document or list ("---", "- ", "topology:").
func looksLikeSlurmYAML(data []byte) bool {
	data = bytes.TrimPrefix(data, bom)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimLeft(bytes.TrimRight(line, " \t\r"), " \t")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		return bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("- ")) || bytes.Equal(line, []byte("-")) ||
			bytes.HasPrefix(line, []byte("topology:")) || bytes.HasPrefix(line, []byte("- topology:"))
	}
	return false
}

type yamlReader struct {
	p     slurmParser
	lines int // in the file, the last one's end counted as a line
}

// at is an error at n. A lone '\r' ends a line for the YAML library
// and not for a file's reader (nor an editor, today): a line past the
// file's last '\n' is its last.
func (y *yamlReader) at(n *yaml.Node, format string, args ...any) *Error {
	line, col := n.Line, n.Column
	if line > y.lines {
		line, col = y.lines, 0
	}
	return &Error{File: y.p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// syntax is the YAML library's error with its line, when it gives one.
func (y *yamlReader) syntax(err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.IndexByte(rest, ':'); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				// The library counts the end of a file without a
				// last newline as a line after the last.
				line, msg = min(n, y.lines), strings.TrimSpace(rest[i+1:])
			}
		}
	}
	if name, ok := strings.CutPrefix(msg, "unknown anchor '"); ok && strings.HasSuffix(name, "' referenced") {
		// An alias (*a) without its anchor, as the library words it: a
		// topology.yaml takes neither, so say that, not that it is not
		// YAML.
		name = strings.TrimSuffix(name, "' referenced")
		return &Error{File: y.p.file, Line: line, Msg: fmt.Sprintf("an alias (*%s) of no anchor: a topology.yaml is read without anchors and aliases", clip(name))}
	}
	for i := range len(msg) {
		if c := msg[i]; c < ' ' || c >= 0x7f {
			// The library's words may hold the file's bytes (an
			// anchor's name): shown escaped.
			msg = quote.String(msg)
			break
		}
	}
	return &Error{File: y.p.file, Line: line, Msg: "not YAML: " + msg}
}

// plain refuses an alias or an anchor at n.
func (y *yamlReader) plain(n *yaml.Node, what string) error {
	if n.Kind == yaml.AliasNode {
		return y.at(n, "an alias (*%s) where %s was expected: a topology.yaml is read without aliases", clip(n.Value), what)
	}
	if n.Anchor != "" {
		return y.at(n, "an anchor (&%s): a topology.yaml is read without anchors and aliases", clip(n.Anchor))
	}
	return nil
}

func kindOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return "the value " + clip(n.Value)
	}
	return "nothing"
}

// mapping calls each for every key and value of the mapping n, refusing
// a key twice and one not in keys.
func (y *yamlReader) mapping(n *yaml.Node, what string, keys []string, each func(k, v *yaml.Node) error) error {
	if err := y.plain(n, what); err != nil {
		return err
	}
	if n.Kind != yaml.MappingNode {
		return y.at(n, "%s (a mapping of %s) expected, not %s", what, strings.Join(keys, ", "), kindOf(n))
	}
	seen := map[string]bool{}
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if err := y.plain(k, "a key"); err != nil {
			return err
		}
		if err := y.plain(v, "a value"); err != nil {
			return err
		}
		known := false
		for _, want := range keys {
			known = known || k.Value == want
		}
		if !known {
			return y.at(k, "unknown key %s in %s; it takes %s", clip(k.Value), what, strings.Join(keys, ", "))
		}
		if seen[k.Value] {
			return y.at(k, "%s twice in %s", k.Value, what)
		}
		seen[k.Value] = true
		if err := each(k, v); err != nil {
			return err
		}
	}
	return nil
}

// list calls each for every element of the sequence n.
func (y *yamlReader) list(n *yaml.Node, what string, each func(e *yaml.Node) error) error {
	if err := y.plain(n, what); err != nil {
		return err
	}
	if n.Kind != yaml.SequenceNode {
		return y.at(n, "%s (a list) expected, not %s", what, kindOf(n))
	}
	for _, e := range n.Content {
		if err := each(e); err != nil {
			return err
		}
	}
	return nil
}

// scalar is the string of the scalar n.
func (y *yamlReader) scalar(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", y.at(n, "%s (a string) expected, not %s", what, kindOf(n))
	}
	return n.Value, nil
}

// hostlist expands the host list of the scalar v, the value of k.
func (y *yamlReader) hostlist(k, v *yaml.Node, maxName int) ([]string, pos, error) {
	s, err := y.scalar(v, k.Value)
	at := pos{v.Line, v.Column}
	if err != nil {
		return nil, at, err
	}
	if v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		at.col++
	}
	names, err := y.p.expand(k.Value, s, func(off int) pos { return pos{at.line, at.col + off} }, maxName)
	return names, at, err
}

// tree reads a tree topology's mapping.
func (y *yamlReader) tree(n *yaml.Node) error {
	y.p.tree = true
	found := false
	err := y.mapping(n, "a tree", []string{"switches"}, func(k, v *yaml.Node) error {
		found = true
		return y.list(v, "switches", func(e *yaml.Node) error {
			var s slurmSwitch
			named := false
			err := y.mapping(e, "a switch", []string{"switch", "children", "nodes"}, func(k, v *yaml.Node) error {
				switch k.Value {
				case "switch":
					named = true
					return y.name(&s, v, "switch")
				case "children":
					names, at, err := y.hostlist(k, v, nodeorder.MaxName)
					if err != nil {
						return err
					}
					if err := checkChildNames(names); err != nil {
						return y.at(v, "%v", err)
					}
					s.childNames, s.childAt = names, at
				case "nodes":
					return y.nodes(&s, k, v)
				}
				return nil
			})
			switch {
			case err != nil:
				return err
			case !named:
				return y.at(e, "a switch without \"switch: NAME\"")
			case s.childNames != nil && s.nodes != nil:
				return y.at(e, "switch %s has both children and nodes (Slurm refuses that too): a switch above others, or a leaf", clip(s.name))
			case len(y.p.switches) == MaxSwitches:
				return y.at(e, "more than %d switches", MaxSwitches)
			}
			return y.p.define(s)
		})
	})
	if err == nil && !found {
		return y.at(n, "a tree without switches")
	}
	return err
}

// name reads the name of a switch or a block (what: "switch", "block"),
// the value v of its key what, into s.
func (y *yamlReader) name(s *slurmSwitch, v *yaml.Node, what string) error {
	name, err := y.scalar(v, what)
	if err != nil {
		return err
	}
	if err := checkName("the "+what+" name", name); err != nil {
		return y.at(v, "%v", err)
	}
	s.name, s.at = name, pos{v.Line, v.Column}
	return nil
}

// nodes reads a switch's or a block's "nodes: HOSTLIST" (key k, value v)
// into s: its hosts, and where they stand.
func (y *yamlReader) nodes(s *slurmSwitch, k, v *yaml.Node) error {
	names, at, err := y.hostlist(k, v, MaxHostName)
	if err != nil {
		return err
	}
	if err := checkHosts(names); err != nil {
		return y.at(v, "%v", err)
	}
	s.nodes, s.nodesAt = names, at
	return nil
}

// block reads a block topology's mapping.
func (y *yamlReader) block(n *yaml.Node) error {
	found := false
	err := y.mapping(n, "a block topology", []string{"block_sizes", "blocks"}, func(k, v *yaml.Node) error {
		if k.Value == "block_sizes" {
			return y.list(v, "block_sizes", func(e *yaml.Node) error {
				if n, err := strconv.ParseUint(e.Value, 10, 32); e.Kind != yaml.ScalarNode || err != nil || n == 0 {
					return y.at(e, "a block size (a number) expected, not %s", kindOf(e))
				}
				return nil
			})
		}
		found = true
		return y.list(v, "blocks", func(e *yaml.Node) error {
			var s slurmSwitch
			named := false
			err := y.mapping(e, "a block", []string{"block", "nodes"}, func(k, v *yaml.Node) error {
				if k.Value == "block" {
					named = true
					return y.name(&s, v, "block")
				}
				return y.nodes(&s, k, v)
			})
			switch {
			case err != nil:
				return err
			case !named:
				return y.at(e, "a block without \"block: NAME\"")
			case len(y.p.switches) == MaxSwitches:
				return y.at(e, "more than %d blocks", MaxSwitches)
			}
			return y.p.define(s)
		})
	})
	if err == nil && !found {
		return y.at(n, "a block topology without blocks")
	}
	return err
}
