package location

import (
	"fmt"
	"strings"

	"github.com/nccomring/libnccomring/nodeorder"
)

// The variables Slurm sets in every task under a topology plugin.
const (
	SlurmTopologyAddr        = "SLURM_TOPOLOGY_ADDR"
	SlurmTopologyAddrPattern = "SLURM_TOPOLOGY_ADDR_PATTERN"
)

// FromSlurmEnv is where this task's node sits by the values of
// SLURM_TOPOLOGY_ADDR and SLURM_TOPOLOGY_ADDR_PATTERN, which Slurm sets
// in every task: the names from the top switch down to the leaf switch,
// then the node's, separated by periods ("s2.s0.trn1-st-trn1-1"), and
// what each is ("switch.switch.node"; "block.node" under topology/block).
// The location is the names before the node's, outermost first, a level
// Slurm leaves empty (a branch that skips it) left out; the one host is
// the node. A level naming several switches (s[1-2]) has no single
// chain: no location, Reason says so. A pattern of
// "node" alone (no topology plugin, or topology/flat) places the node
// nowhere (Topology.Reason says so). No file is read; errors name the
// variable. Names are read as location and host names, so a node name
// with a period in it (which Slurm would split too) is refused by the
// count of names.
func FromSlurmEnv(addr, pattern string) (*Topology, error) {
	fail := func(name, format string, args ...any) error {
		return &Error{File: name, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case addr == "" && pattern == "":
		return nil, fail(SlurmTopologyAddr, "is not set, nor %s: not in a Slurm task (srun, sbatch), or its Slurm sets neither", SlurmTopologyAddrPattern)
	case addr == "":
		return nil, fail(SlurmTopologyAddr, "is not set, and %s is", SlurmTopologyAddrPattern)
	case pattern == "":
		return nil, fail(SlurmTopologyAddrPattern, "is not set, and %s is: which of its names are switches is not said", SlurmTopologyAddr)
	case len(addr) > MaxLine:
		return nil, fail(SlurmTopologyAddr, "has %d bytes, more than the %d KiB a value may have", len(addr), MaxLine>>10)
	case len(pattern) > MaxLine:
		return nil, fail(SlurmTopologyAddrPattern, "has %d bytes, more than the %d KiB a value may have", len(pattern), MaxLine>>10)
	}
	names := strings.Split(addr, ".")
	kinds := strings.Split(pattern, ".")
	if len(names) != len(kinds) {
		return nil, fail(SlurmTopologyAddr, "%s has %d period-separated names and %s, %s, has %d: the counts differ, and they go together name for name", clip(addr), len(names), SlurmTopologyAddrPattern, clip(pattern), len(kinds))
	}
	for i, k := range kinds {
		last := i == len(kinds)-1
		switch {
		case last && k != "node":
			return nil, fail(SlurmTopologyAddrPattern, "%s ends in %s; it ends in the node (\"switch.switch.node\")", clip(pattern), clip(k))
		case !last && k == "node":
			return nil, fail(SlurmTopologyAddrPattern, "%s has \"node\" before its end; the node is last (\"switch.switch.node\")", clip(pattern))
		case k == "":
			return nil, fail(SlurmTopologyAddrPattern, "%s has an empty name", clip(pattern))
		case k != "switch" && k != "block" && k != "node":
			return nil, fail(SlurmTopologyAddrPattern, "%s has %s; Slurm's kinds are \"switch\", \"block\" and \"node\" (\"switch.switch.node\", \"block.node\")", clip(pattern), clip(k))
		}
	}
	host := names[len(names)-1]
	if err := CheckHost(host); err != nil {
		return nil, fail(SlurmTopologyAddr, "the node: %v", err)
	}
	// Slurm writes, for each level of switches from the highest down,
	// the switches of that level above the node, as a host list: none
	// (an empty name) where the node's branch skips the level, several
	// ("s[1-2]") where it hangs from two.
	var levels []string
	several := ""
	for _, l := range names[:len(names)-1] {
		switch {
		case l == "":
			continue
		case IsHostlist(l):
			if several == "" {
				several = l
			}
			continue
		}
		if err := checkName("the switch name", l); err != nil {
			return nil, fail(SlurmTopologyAddr, "%v", err)
		}
		levels = append(levels, l)
	}
	if len(levels) > nodeorder.MaxLevels {
		return nil, fail(SlurmTopologyAddr, "%s has %d switches; a location holds at most %d names", clip(addr), len(levels), nodeorder.MaxLevels)
	}
	t := &Topology{Source: "slurm-env", File: SlurmTopologyAddr}
	h := Host{Name: host, Location: strings.Join(levels, "/")}
	switch {
	case several != "":
		h.Location = ""
		h.Reason = fmt.Sprintf("%s names %s at one level: the node is below more than one switch there, so it has no single chain of switches", SlurmTopologyAddr, clip(several))
	case len(levels) == 0 && len(kinds) > 1:
		h.Reason = fmt.Sprintf("%s is %s: it names no switch at any of the %d switch levels of %s, %s", SlurmTopologyAddr, clip(addr), len(kinds)-1, SlurmTopologyAddrPattern, clip(pattern))
	case len(levels) == 0:
		h.Reason = fmt.Sprintf("%s is %s, the node alone: this job's topology plugin places it under no switch", SlurmTopologyAddrPattern, clip(pattern))
	}
	t.add(h)
	return t, nil
}
