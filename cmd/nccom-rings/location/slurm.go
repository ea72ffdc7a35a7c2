package location

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/nccomring/libnccomring/nodeorder"
)

// ParseSlurm reads what Slurm says of its network (data, read from file)
// and returns where each of its hosts sits: a topology.conf of the
// topology/tree or topology/block plugin, a topology.yaml (Slurm 25.05;
// ParseSlurmYAML, its cluster_default topology) or the output of
// "scontrol show topology", told apart by their content.
//
// Under topology/tree a host's location is the chain of switches from a
// top switch (one no other switch lists) down to the leaf switch whose
// Nodes= lists the host, top first; under topology/block it is its
// block's name (a block is one level).
//
// A topology.conf is read as Slurm reads it: one switch per line,
// "SwitchName=NAME" first, then "Switches=HOSTLIST" or "Nodes=HOSTLIST"
// and an optional "LinkSpeed=N" (ignored); or one block per line,
// "BlockName=NAME Nodes=HOSTLIST", and a "BlockSizes=4,16" line
// (ignored); keys in any case; "KEY = VALUE" and a value in double
// quotes allowed; '#' to the end of the line a comment; a line ending in
// '\' continued on the next. What Slurm refuses is refused too (both
// Switches= and Nodes= on one switch, a switch defined twice, a child
// switch no line defines, a cycle), and more: an unknown key, a key
// twice on one line, a backslash escape inside a name, a switch name that
// is not a location name, a host name that is not a host name, Include
// lines, SwitchName= and BlockName= lines in one file. A switch with
// neither list is an empty leaf, as in Slurm.
//
// scontrol show topology prints the same lines with Level= (0 for a leaf
// switch) after each switch's name, and lists under an upper switch both
// its Switches= and every node below it: those nodes are placed by the
// leaves, so the tree is the one topology.conf gives. Its
// AggregatedBlock= lines (unions of the base blocks) are skipped.
// scontrol show topology NODE prints NODE's switches alone, their
// Switches= naming siblings it does not print: such a switch is one whose
// nodes are not known, and is skipped. A switch whose chain is then not
// whole (one below the highest Level= printed, without a parent) leaves
// its hosts without a location.
//
// Two cases Slurm accepts have no single location, and their hosts are
// kept with a Reason instead (not found, for a tool): a host listed under
// two leaf switches (or blocks), and the hosts below a switch listed by
// two parent switches.
func ParseSlurm(file string, data []byte) (*Topology, error) {
	return ParseSlurmWith(file, data, SlurmOptions{})
}

// SlurmOptions are what ParseSlurmWith is told.
type SlurmOptions struct {
	// Topology names the topology of a topology.yaml to read; "" is its
	// cluster_default one. Only a topology.yaml has names.
	Topology string
}

// ParseSlurmWith is ParseSlurm with opts.
func ParseSlurmWith(file string, data []byte, opts SlurmOptions) (*Topology, error) {
	if looksLikeSlurmYAML(data) {
		return ParseSlurmYAML(file, data, opts.Topology)
	}
	if opts.Topology != "" {
		return nil, &Error{File: file, Msg: fmt.Sprintf("a topology (%s) was asked for, and only a topology.yaml names its topologies; this file is a topology.conf or scontrol's output", clip(opts.Topology))}
	}
	return parseSlurm(file, data, MaxHosts)
}

// scontrolLine is the start of a switch of scontrol show topology.
var scontrolLine = regexp.MustCompile(`(?im)^[ \t]*SwitchName=[^ \t\n]+[ \t]+Level=|^[ \t]*BlockName=[^ \t\n]+[ \t]+BlockIndex=`)

// parseSlurm is ParseSlurm of a topology.conf or scontrol's output, with
// at most maxHosts names expanded (the fuzz target's is smaller, to stay
// fast).
func parseSlurm(file string, data []byte, maxHosts uint64) (*Topology, error) {
	data, err := fileData(file, data)
	if err != nil {
		return nil, err
	}
	p := slurmParser{file: file, byName: make(map[string]int), maxHosts: maxHosts, scontrol: scontrolLine.Match(data)}
	if err := p.readLines(data); err != nil {
		return nil, err
	}
	if len(p.switches) == 0 && !p.blocks {
		return nil, &Error{File: file, Msg: "no SwitchName= or BlockName= line: not a topology.conf (of the topology/tree or topology/block plugin), nor scontrol show topology's output"}
	}
	return p.finish()
}

// finish links the switches read and places their hosts.
func (p *slurmParser) finish() (*Topology, error) {
	if err := p.link(); err != nil {
		return nil, err
	}
	order, err := p.sort()
	if err != nil {
		return nil, err
	}
	if err := p.chains(order); err != nil {
		return nil, err
	}
	return p.hosts(), nil
}

// pos is where something is in the file: line, and byte of the line.
type pos struct{ line, col int }

type slurmSwitch struct {
	name       string
	at         pos      // the SwitchName value
	childNames []string // Switches=, expanded
	childAt    pos
	nodes      []string // Nodes=, expanded
	nodesAt    pos

	children []int // resolved, each once
	parents  []int // each once
	location string
	reason   string // why the switch has no single chain
	level    int    // scontrol's Level= (0 a leaf)
}

type slurmParser struct {
	file     string
	switches []slurmSwitch
	byName   map[string]int
	names    uint64 // names expanded so far, against maxHosts
	maxHosts uint64
	// nameBytes: what the lists expanded so far are sized at (each
	// expr's names times its longest name), against MaxNameBytes.
	nameBytes uint64
	// tree, blocks: the file has SwitchName= lines, BlockName= lines.
	tree, blocks bool
	// scontrol: the file is scontrol show topology's output, whose
	// switches have Level= and whose upper switches list every node below.
	scontrol bool
	// unprinted: the first switch of scontrol's output that a Switches=
	// names and no line defines (scontrol show topology NODE prints only
	// NODE's switches); maxLevel, the highest Level= printed.
	unprinted string
	maxLevel  int
}

func (p *slurmParser) errAt(at pos, format string, args ...any) *Error {
	return &Error{File: p.file, Line: at.line, Col: at.col, Msg: fmt.Sprintf(format, args...)}
}

// logical is one line as Slurm reads it: comments stripped, continued
// lines joined. segs maps its bytes back to the file.
type logical struct {
	text []byte
	segs []segment
}

// segment: text[off:] came from byte col of line.
type segment struct {
	off       int
	line, col int
}

// posFrom is pos of the bytes from off on.
func (l *logical) posFrom(off int) func(int) pos {
	return func(rel int) pos { return l.pos(off + rel) }
}

func (l *logical) pos(off int) pos {
	s := l.segs[0]
	for _, t := range l.segs[1:] {
		if t.off > off {
			break
		}
		s = t
	}
	return pos{s.line, s.col + off - s.off}
}

// readLines reads every logical line of data and each switch it defines.
func (p *slurmParser) readLines(data []byte) error {
	var cur logical
	first := 0 // the line cur began on
	line := 0
	for len(data) > 0 {
		line++
		raw := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(raw) > MaxLine {
			return &Error{File: p.file, Line: line, Msg: fmt.Sprintf("the line has %d bytes, more than the %d KiB a line may have", len(raw), MaxLine>>10)}
		}
		raw = bytes.TrimSuffix(raw, []byte{'\r'})
		raw = stripComment(raw)
		body, continued := stripContinuation(raw)
		if len(cur.segs) == 0 {
			first = line
		}
		cur.segs = append(cur.segs, segment{off: len(cur.text), line: line, col: 1})
		cur.text = append(cur.text, body...)
		if len(cur.text) > MaxLine {
			return &Error{File: p.file, Line: first, Msg: fmt.Sprintf("the line, with the lines that continue it, has more than the %d KiB a line may have", MaxLine>>10)}
		}
		if continued {
			continue
		}
		if err := p.readLine(&cur); err != nil {
			return err
		}
		cur = logical{text: cur.text[:0], segs: cur.segs[:0]}
	}
	if len(cur.segs) > 0 {
		return &Error{File: p.file, Line: first, Msg: "the file ends inside a line continued with '\\'"}
	}
	return nil
}

// stripComment cuts raw at its first '#' not escaped by a backslash (one
// after an even run of backslashes, as Slurm reads it).
func stripComment(raw []byte) []byte {
	bs := 0
	for i, c := range raw {
		switch {
		case c == '#' && bs%2 == 0:
			return raw[:i]
		case c == '\\':
			bs++
		default:
			bs = 0
		}
	}
	return raw
}

// stripContinuation reports whether raw ends in an odd run of backslashes
// (trailing blanks after it allowed) and returns raw without the last.
func stripContinuation(raw []byte) ([]byte, bool) {
	end := len(raw)
	for end > 0 && (raw[end-1] == ' ' || raw[end-1] == '\t') {
		end--
	}
	bs := 0
	for end-bs > 0 && raw[end-bs-1] == '\\' {
		bs++
	}
	if bs%2 == 0 {
		return raw, false
	}
	return raw[:end-1], true
}

// pair is one KEY=VALUE of a line, with where its key and value begin.
type pair struct {
	key, value     string
	keyOff, valOff int
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.'
}

// pairs splits a logical line into its KEY=VALUE pairs.
func (p *slurmParser) pairs(l *logical) ([]pair, error) {
	text := string(l.text)
	var out []pair
	i := 0
	for {
		for i < len(text) && isBlank(text[i]) {
			i++
		}
		if i == len(text) {
			return out, nil
		}
		k := i
		for i < len(text) && isKeyByte(text[i]) {
			i++
		}
		if i == k {
			return nil, p.errAt(l.pos(i), "%s where a KEY=VALUE pair was expected", clip(text[i:i+1]))
		}
		key := text[k:i]
		for i < len(text) && isBlank(text[i]) {
			i++
		}
		if i+1 < len(text) && strings.IndexByte("+-*/", text[i]) >= 0 && text[i+1] == '=' {
			return nil, p.errAt(l.pos(i), "%s%s: topology.conf takes KEY=VALUE, not %s=", key, text[i:i+2], text[i:i+1])
		}
		if i == len(text) || text[i] != '=' {
			if strings.EqualFold(key, "include") {
				return nil, p.errAt(l.pos(k), "Include lines are not followed: pass the included file itself, or the files concatenated")
			}
			return nil, p.errAt(l.pos(i), "'=' expected after the key %s", clip(key))
		}
		i++
		for i < len(text) && isBlank(text[i]) {
			i++
		}
		v := i
		var value string
		switch {
		case i == len(text):
			return nil, p.errAt(l.pos(i), "%s= has no value", key)
		case text[i] == '"':
			end := strings.IndexByte(text[i+1:], '"')
			if end < 0 {
				return nil, p.errAt(l.pos(i), "a '\"' without the '\"' that ends the value")
			}
			v = i + 1
			value = text[v : v+end]
			i = v + end + 1
			if i < len(text) && !isBlank(text[i]) {
				return nil, p.errAt(l.pos(i), "%s right after a quoted value; a blank expected", clip(text[i:i+1]))
			}
		default:
			for i < len(text) && !isBlank(text[i]) {
				i++
			}
			value = text[v:i]
		}
		out = append(out, pair{key: key, value: value, keyOff: k, valOff: v})
	}
}

// readLine reads one logical line: blank, one switch or one block.
func (p *slurmParser) readLine(l *logical) error {
	pairs, err := p.pairs(l)
	if err != nil || len(pairs) == 0 {
		return err
	}
	head := pairs[0]
	switch {
	case strings.EqualFold(head.key, "SwitchName"):
		if p.blocks {
			return p.errAt(l.pos(head.keyOff), "SwitchName= in a file of BlockName= lines: a file is the topology/tree plugin's or the topology/block plugin's, not both")
		}
		p.tree = true
		return p.readSwitch(l, pairs)
	case strings.EqualFold(head.key, "BlockName"):
		if p.tree {
			return p.errAt(l.pos(head.keyOff), "BlockName= in a file of SwitchName= lines: a file is the topology/tree plugin's or the topology/block plugin's, not both")
		}
		p.blocks = true
		return p.readBlock(l, pairs)
	case strings.EqualFold(head.key, "BlockSizes") && !p.scontrol:
		if len(pairs) > 1 {
			return p.errAt(l.pos(pairs[1].keyOff), "BlockSizes= stands alone on its line")
		}
		for _, s := range strings.Split(head.value, ",") {
			if n, err := strconv.ParseUint(s, 10, 32); err != nil || n == 0 {
				return p.errAt(l.pos(head.valOff), "BlockSizes=%s is not a list of block sizes (numbers separated by commas)", clip(head.value))
			}
		}
		if p.tree {
			return p.errAt(l.pos(head.keyOff), "BlockSizes= in a file of SwitchName= lines: a file is the topology/tree plugin's or the topology/block plugin's, not both")
		}
		p.blocks = true
		return nil
	case strings.EqualFold(head.key, "AggregatedBlock") && p.scontrol:
		// scontrol show topology's blocks of the larger block sizes:
		// unions of the base blocks (BlockName=), which say it all.
		return nil
	}
	return p.errAt(l.pos(head.keyOff), "SwitchName= or BlockName= expected first on the line, not %s=", clip(head.key))
}

// readSwitch reads a SwitchName= line.
func (p *slurmParser) readSwitch(l *logical, pairs []pair) error {
	s, err := p.newSwitch(l, pairs[0], "switch", "switches")
	if err != nil {
		return err
	}
	var seen [4]bool // Switches, Nodes, LinkSpeed, Level
	level := uint64(0)
	for _, kv := range pairs[1:] {
		at := l.pos(kv.valOff)
		slot := -1
		switch {
		case strings.EqualFold(kv.key, "Switches"):
			slot = 0
		case strings.EqualFold(kv.key, "Nodes"):
			slot = 1
		case strings.EqualFold(kv.key, "LinkSpeed"):
			slot = 2
		case strings.EqualFold(kv.key, "Level") && p.scontrol:
			slot = 3
		case strings.EqualFold(kv.key, "SwitchName"):
			return p.errAt(l.pos(kv.keyOff), "a second SwitchName= on the line; one switch per line")
		case p.scontrol:
			return p.errAt(l.pos(kv.keyOff), "unknown key %s=; scontrol show topology's SwitchName lines have Level=, LinkSpeed=, Nodes= and Switches=", clip(kv.key))
		default:
			return p.errAt(l.pos(kv.keyOff), "unknown key %s=; a SwitchName line takes Switches=, Nodes= and LinkSpeed=", clip(kv.key))
		}
		if seen[slot] {
			return p.errAt(l.pos(kv.keyOff), "%s= twice on the line", kv.key)
		}
		seen[slot] = true
		switch slot {
		case 0:
			names, err := p.expand(kv.key, kv.value, l.posFrom(kv.valOff), nodeorder.MaxName)
			if err != nil {
				return err
			}
			if err := checkChildNames(names); err != nil {
				return p.errAt(at, "%v", err)
			}
			s.childNames, s.childAt = names, at
		case 1:
			if err := p.readNodes(&s, l, kv); err != nil {
				return err
			}
		case 2:
			if _, err := strconv.ParseUint(kv.value, 10, 32); err != nil {
				return p.errAt(at, "LinkSpeed=%s is not a number of 0 to %d", clip(kv.value), uint32(1<<32-1))
			}
		case 3:
			var err error
			if level, err = strconv.ParseUint(kv.value, 10, 16); err != nil {
				return p.errAt(at, "Level=%s is not a number of 0 to 65535", clip(kv.value))
			}
		}
	}
	s.level = int(level)
	p.maxLevel = max(p.maxLevel, s.level)
	switch {
	case p.scontrol && !seen[3]:
		return p.errAt(s.at, "switch %s has no Level=: scontrol show topology gives every switch's", clip(s.name))
	case p.scontrol && level == 0 && seen[0]:
		return p.errAt(s.childAt, "switch %s has Level=0, a leaf, and Switches=", clip(s.name))
	case p.scontrol && level > 0:
		// An upper switch lists every node below it: its Switches= say
		// where they are.
		s.nodes = nil
	case seen[0] && seen[1]:
		return p.errAt(s.at, "switch %s has both Switches= and Nodes= (Slurm refuses that too): a switch above others, or a leaf", clip(s.name))
	}
	return p.define(s)
}

// readBlock reads a BlockName= line: a block is one level, its name the
// location of its nodes.
func (p *slurmParser) readBlock(l *logical, pairs []pair) error {
	s, err := p.newSwitch(l, pairs[0], "block", "blocks")
	if err != nil {
		return err
	}
	var seen [3]bool // Nodes, BlockIndex, BlockSize
	for _, kv := range pairs[1:] {
		at := l.pos(kv.valOff)
		slot := -1
		switch {
		case strings.EqualFold(kv.key, "Nodes"):
			slot = 0
		case strings.EqualFold(kv.key, "BlockIndex") && p.scontrol:
			slot = 1
		case strings.EqualFold(kv.key, "BlockSize") && p.scontrol:
			slot = 2
		case strings.EqualFold(kv.key, "BlockName"):
			return p.errAt(l.pos(kv.keyOff), "a second BlockName= on the line; one block per line")
		default:
			return p.errAt(l.pos(kv.keyOff), "unknown key %s=; a BlockName line takes Nodes=", clip(kv.key))
		}
		if seen[slot] {
			return p.errAt(l.pos(kv.keyOff), "%s= twice on the line", kv.key)
		}
		seen[slot] = true
		if slot > 0 {
			if _, err := strconv.ParseUint(kv.value, 10, 32); err != nil {
				return p.errAt(at, "%s=%s is not a number", kv.key, clip(kv.value))
			}
			continue
		}
		if err := p.readNodes(&s, l, kv); err != nil {
			return err
		}
	}
	return p.define(s)
}

// newSwitch reads the SwitchName= or BlockName= pair that begins a line (what:
// "switch" or "block", plural: "switches" or "blocks"): the switch it
// names, if there is room for one more.
func (p *slurmParser) newSwitch(l *logical, head pair, what, plural string) (slurmSwitch, error) {
	s := slurmSwitch{name: head.value, at: l.pos(head.valOff)}
	if err := checkName("the "+what+" name", s.name); err != nil {
		return s, p.errAt(s.at, "%v", err)
	}
	if len(p.switches) == MaxSwitches {
		return s, p.errAt(l.pos(head.keyOff), "more than %d %s", MaxSwitches, plural)
	}
	return s, nil
}

// readNodes reads the Nodes= pair kv of a SwitchName= or BlockName= line
// into s: its hosts, and where they stand.
func (p *slurmParser) readNodes(s *slurmSwitch, l *logical, kv pair) error {
	at := l.pos(kv.valOff)
	names, err := p.expand(kv.key, kv.value, l.posFrom(kv.valOff), MaxHostName)
	if err != nil {
		return err
	}
	if err := checkHosts(names); err != nil {
		return p.errAt(at, "%v", err)
	}
	s.nodes, s.nodesAt = names, at
	return nil
}

// define adds switch (or block) s, refusing a name defined before.
func (p *slurmParser) define(s slurmSwitch) error {
	what := "switch"
	if p.blocks {
		what = "block"
	}
	if first, ok := p.byName[s.name]; ok {
		return p.errAt(s.at, "%s %s is defined again; first on line %d", what, clip(s.name), p.switches[first].at.line)
	}
	p.byName[s.name] = len(p.switches)
	p.switches = append(p.switches, s)
	return nil
}

// checkHosts is CheckHost of each name.
func checkHosts(names []string) error {
	for _, n := range names {
		if err := CheckHost(n); err != nil {
			return err
		}
	}
	return nil
}

// checkChildNames checks each name of a switch's children (Switches=,
// children:) as a switch name.
func checkChildNames(names []string) error {
	for _, n := range names {
		if err := checkName("the child switch name", n); err != nil {
			return err
		}
	}
	return nil
}

// expand expands the hostlist value (of key, its byte off at at(off))
// against what is left of maxHosts and MaxNameBytes, its names at most
// maxName bytes each. The list is sized before it is expanded (its
// names, and each expr's names times its longest name), so a list past a
// limit is refused before any memory is taken for its names.
func (p *slurmParser) expand(key, value string, at func(off int) pos, maxName int) ([]string, error) {
	lim := hostlistLimits{names: p.maxHosts - p.names, nameLen: uint64(maxName), bytes: MaxNameBytes - p.nameBytes}
	names, size, err := expandHostlist(value, lim)
	if err != nil {
		he := err.(*hostlistError)
		var msg string
		switch he.Kind {
		case tooManyNames:
			msg = fmt.Sprintf("%s=%s gives more names than the file may have (%d, hostlists expanded)", key, clip(value), p.maxHosts)
		case tooLongName:
			msg = fmt.Sprintf("%s=%s gives names of %d bytes, more than the %d a name may have (refused before it is expanded)", key, clip(value), he.Longest, maxName)
		case tooManyBytes:
			msg = fmt.Sprintf("%s=%s gives %d names of up to %d bytes: with the lists before it, up to %d bytes of names (names times the longest), more than the %d MiB a file's names may take (refused before it is expanded)",
				key, clip(value), he.Names, he.Longest, p.nameBytes+he.Bytes, MaxNameBytes>>20)
		default:
			msg = fmt.Sprintf("%s=%s is not a host list: %s", key, clip(value), he.Msg)
		}
		return nil, p.errAt(at(he.Off), "%s", msg)
	}
	p.names += uint64(len(names))
	p.nameBytes += size
	return names, nil
}

// link resolves every switch's children, and so its parents.
func (p *slurmParser) link() error {
	for i := range p.switches {
		s := &p.switches[i]
		for _, name := range s.childNames {
			c, ok := p.byName[name]
			switch {
			case !ok && p.scontrol:
				// scontrol show topology NODE prints NODE's switches
				// alone, and their Switches= name the siblings it does
				// not print: switches whose nodes are not known.
				if p.unprinted == "" {
					p.unprinted = name
				}
				continue
			case !ok:
				return p.errAt(s.childAt, "switch %s lists %s in Switches=, and no SwitchName= line defines it", clip(s.name), clip(name))
			case c == i:
				return p.errAt(s.childAt, "switch %s lists itself in Switches=", clip(s.name))
			}
			child := &p.switches[c]
			// A parent adds its children in one go, so a child listed
			// twice by one parent has that parent last.
			if n := len(child.parents); n > 0 && child.parents[n-1] == i {
				continue
			}
			child.parents = append(child.parents, i)
			s.children = append(s.children, c)
		}
		s.childNames = nil
	}
	return nil
}

// sort orders the switches parents first (Kahn's algorithm, top switches
// in file order), or finds a cycle.
func (p *slurmParser) sort() ([]int, error) {
	n := len(p.switches)
	pending := make([]int, n) // parents not yet ordered
	order := make([]int, 0, n)
	for i := range p.switches {
		pending[i] = len(p.switches[i].parents)
		if pending[i] == 0 {
			order = append(order, i)
		}
	}
	for next := 0; next < len(order); next++ {
		for _, c := range p.switches[order[next]].children {
			if pending[c]--; pending[c] == 0 {
				order = append(order, c)
			}
		}
	}
	if len(order) == n {
		return order, nil
	}
	// Every switch left has a parent left: walk up from the first one
	// until a switch repeats; that one is on a cycle.
	at := -1
	for i := range pending {
		if pending[i] > 0 {
			at = i
			break
		}
	}
	seen := make([]bool, n)
	for !seen[at] {
		seen[at] = true
		at = p.parentOnCycle(at, pending)
	}
	cycle := []string{p.switches[at].name}
	for q := p.parentOnCycle(at, pending); q != at && len(cycle) < 8; q = p.parentOnCycle(q, pending) {
		cycle = append(cycle, p.switches[q].name)
	}
	return nil, p.errAt(p.switches[at].at, "switch %s is below itself (a cycle: %s, each listed by the next): topology.conf describes a tree",
		clip(p.switches[at].name), strings.Join(cycle, " < "))
}

// parentOnCycle is a parent of s still pending, the one a walk up took.
func (p *slurmParser) parentOnCycle(s int, pending []int) int {
	for _, q := range p.switches[s].parents {
		if pending[q] > 0 {
			return q
		}
	}
	return s
}

// chains gives every switch its location (or its reason for none), in
// order (parents first).
func (p *slurmParser) chains(order []int) error {
	depth := make([]int, len(p.switches))
	for _, i := range order {
		s := &p.switches[i]
		switch np := len(s.parents); {
		case np == 0 && p.unprinted != "" && s.level < p.maxLevel:
			// Not the top of its chain: its parent is one not printed.
			s.reason = fmt.Sprintf("switch %s (line %d, Level=%d) is printed without the switch above it (the output names switches it does not print, such as %s, as scontrol show topology NODE does for another node's), so its chain of switches is not whole",
				clip(s.name), s.at.line, s.level, clip(p.unprinted))
		case np == 0:
			s.location, depth[i] = s.name, 1
		case np == 1:
			up := &p.switches[s.parents[0]]
			if up.reason != "" {
				s.reason = up.reason
				continue
			}
			depth[i] = depth[s.parents[0]] + 1
			if depth[i] > nodeorder.MaxLevels {
				return p.errAt(s.at, "switch %s is %d switches down from its top switch %s; a location holds at most %d names",
					clip(s.name), depth[i], clip(strings.SplitN(up.location, "/", 2)[0]), nodeorder.MaxLevels)
			}
			s.location = up.location + "/" + s.name
		default:
			a, b := &p.switches[s.parents[0]], &p.switches[s.parents[1]]
			s.reason = fmt.Sprintf("switch %s (line %d) is listed by two switches, %s (line %d) and %s (line %d), so its hosts have no single chain of switches",
				clip(s.name), s.at.line, clip(a.name), a.at.line, clip(b.name), b.at.line)
		}
	}
	return nil
}

// hosts lists every host of the leaves, in file order.
func (p *slurmParser) hosts() *Topology {
	t := &Topology{Source: "slurm", File: p.file}
	listed := 0
	for i := range p.switches {
		listed += len(p.switches[i].nodes)
	}
	t.grow(listed)
	leafOf := make([]int, 0, listed) // per host, its first leaf
	for i := range p.switches {
		s := &p.switches[i]
		for _, name := range s.nodes {
			h, added := t.add(Host{Name: name, Location: s.location, Line: s.nodesAt.line, Reason: s.reason})
			if added {
				leafOf = append(leafOf, i)
				continue
			}
			if first := leafOf[h]; first != i && first >= 0 {
				f := &p.switches[first]
				t.Hosts[h].Location = ""
				if p.blocks {
					t.Hosts[h].Reason = fmt.Sprintf("listed in two blocks, %s (line %d) and %s (line %d), so it has no single block",
						clip(f.name), f.nodesAt.line, clip(s.name), s.nodesAt.line)
				} else {
					t.Hosts[h].Reason = fmt.Sprintf("listed under two leaf switches, %s (line %d) and %s (line %d), so it has no single chain of switches",
						clip(f.name), f.nodesAt.line, clip(s.name), s.nodesAt.line)
				}
				leafOf[h] = -1
			}
		}
		s.nodes = nil
	}
	return t
}
