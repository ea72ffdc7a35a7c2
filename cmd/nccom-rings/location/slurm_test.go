package location_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
)

// locationsOf is name=location (or name!reason-start) for every host.
func locationsOf(topo *location.Topology) []string {
	var out []string
	for _, h := range topo.Hosts {
		if h.Location == "" {
			out = append(out, h.Name+"!")
			continue
		}
		out = append(out, h.Name+"="+h.Location)
	}
	return out
}

func TestSlurmFixture(t *testing.T) {
	topo := parseFile(t, location.ParseSlurm, "testdata/topology-8.conf")
	assert.Equal(t, "slurm", topo.Source)
	assert.Equal(t, []string{
		"trn001=spine0/leaf1", "trn003=spine0/leaf1", "trn005=spine0/leaf1", "trn007=spine0/leaf1",
		"trn002=spine0/leaf2", "trn004=spine0/leaf2", "trn006=spine0/leaf2", "trn008=spine0/leaf2",
	}, locationsOf(topo))
	h, ok := topo.Lookup("TRN004.ec2.internal")
	require.True(t, ok)
	assert.Equal(t, location.Host{Name: "trn004", Location: "spine0/leaf2", Line: 7}, h)
	h, ok = topo.Lookup("trn001")
	require.True(t, ok)
	assert.Equal(t, 5, h.Line)
	_, ok = topo.Lookup("trn009")
	assert.False(t, ok)
}

func TestSlurmTrees(t *testing.T) {
	// Two top switches, unequal depths (a leaf right under a top switch),
	// an empty leaf, keys in any case, blanks around '=', a quoted value,
	// comments, CRLF line ends and a continued line.
	topo := parseSlurm(t, "# core\r\n"+
		"SwitchName=core Switches=agg[1-2],edge\r\n"+
		"switchname = agg1 SWITCHES=\"leaf[1-2]\"\r\n"+
		"SwitchName=agg2 Switches=leaf3 # one leaf\n"+
		"SwitchName=leaf1 Nodes=n[01-02] LinkSpeed=100\n"+
		"SwitchName=leaf2 Nodes=n03\n"+
		"SwitchName=leaf3 \\\n"+
		"  Nodes=n04,N05.cluster\n"+
		"SwitchName=edge Nodes=e1\n"+
		"SwitchName=empty\n"+
		"SwitchName=other Nodes=lonely\n"+
		"\n   \t\n")
	assert.Equal(t, []string{
		"n01=core/agg1/leaf1", "n02=core/agg1/leaf1", "n03=core/agg1/leaf2",
		"n04=core/agg2/leaf3", "N05.cluster=core/agg2/leaf3", "e1=core/edge", "lonely=other",
	}, locationsOf(topo))
	h, ok := topo.Lookup("n05")
	require.True(t, ok)
	assert.Equal(t, 8, h.Line, "the line Nodes= is on, after the continuation")
}

func TestSlurmHostUnderTwoLeavesHasNoLocation(t *testing.T) {
	topo := parseSlurm(t, "SwitchName=top Switches=a,b\n"+
		"SwitchName=a Nodes=n[1-2]\n"+
		"SwitchName=b Nodes=n2,n3,N1.x\n"+
		"SwitchName=c Nodes=n3\n")
	assert.Equal(t, []string{"n1!", "n2!", "n3!"}, locationsOf(topo))
	h, _ := topo.Lookup("n1")
	assert.Equal(t, `listed under two leaf switches, "a" (line 2) and "b" (line 3), so it has no single chain of switches`, h.Reason)
	h, _ = topo.Lookup("n3")
	assert.Contains(t, h.Reason, `"b" (line 3) and "c" (line 4)`)

	// Listed twice under one leaf is one place.
	topo = parseSlurm(t, "SwitchName=a Nodes=n[1-2],n1\n")
	assert.Equal(t, []string{"n1=a", "n2=a"}, locationsOf(topo))
}

func TestSlurmSwitchWithTwoParentsLeavesItsHostsUnlocated(t *testing.T) {
	topo := parseSlurm(t, "SwitchName=s1 Switches=mid,other\n"+
		"SwitchName=s2 Switches=mid\n"+
		"SwitchName=mid Switches=leaf\n"+
		"SwitchName=leaf Nodes=n1\n"+
		"SwitchName=other Nodes=n2\n")
	assert.Equal(t, []string{"n1!", "n2=s1/other"}, locationsOf(topo))
	h, _ := topo.Lookup("n1")
	assert.Equal(t, `switch "mid" (line 3) is listed by two switches, "s1" (line 1) and "s2" (line 2), so its hosts have no single chain of switches`, h.Reason)

	// One parent listing a child twice is one parent.
	topo = parseSlurm(t, "SwitchName=s1 Switches=leaf,leaf\nSwitchName=leaf Nodes=n1\n")
	assert.Equal(t, []string{"n1=s1/leaf"}, locationsOf(topo))
}

func TestSlurmChainOfEightIsTheLimit(t *testing.T) {
	chain := func(n int) string {
		var b strings.Builder
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, "SwitchName=s%d Switches=s%d\n", i, i+1)
		}
		fmt.Fprintf(&b, "SwitchName=s%d Nodes=host\n", n)
		return b.String()
	}
	topo := parseSlurm(t, chain(8))
	assert.Equal(t, []string{"host=s1/s2/s3/s4/s5/s6/s7/s8"}, locationsOf(topo))
	_, err := location.ParseSlurm("topology.conf", []byte(chain(9)))
	assert.EqualError(t, err, `topology.conf:9:12: switch "s9" is 9 switches down from its top switch "s1"; a location holds at most 8 names`)
}

// Each malformed file is refused whole, naming the line, the byte and
// what was expected.
func TestSlurmMalformed(t *testing.T) {
	long := "SwitchName=s0 Nodes=" + strings.Repeat("n", 64<<10) + "\n"
	cases := []malformed{
		{"empty", "# nothing\n\n", "topology.conf: no SwitchName= or BlockName= line: not a topology.conf (of the topology/tree or topology/block plugin), nor scontrol show topology's output"},
		{"both lists", "SwitchName=s1 Nodes=n1\nSwitchName=s0 Nodes=a Switches=s1\n",
			`topology.conf:2:12: switch "s0" has both Switches= and Nodes= (Slurm refuses that too): a switch above others, or a leaf`},
		{"not a switch line", "  Nodes=a\n", "topology.conf:1:3: SwitchName= or BlockName= expected first on the line, not \"Nodes\"="},
		{"defined twice", "SwitchName=s0 Nodes=a\n\nSwitchName=s0 Nodes=b\n", `topology.conf:3:12: switch "s0" is defined again; first on line 1`},
		{"undefined child", "SwitchName=top Switches=s[1-2]\nSwitchName=s1 Nodes=a\n",
			`topology.conf:1:25: switch "top" lists "s2" in Switches=, and no SwitchName= line defines it`},
		{"itself", "SwitchName=a Switches=a\n", `topology.conf:1:23: switch "a" lists itself in Switches=`},
		{"cycle", "SwitchName=top Switches=a\nSwitchName=a Switches=b\nSwitchName=b Switches=c\nSwitchName=c Switches=a\n",
			`topology.conf:2:12: switch "a" is below itself (a cycle: a < c < b, each listed by the next): topology.conf describes a tree`},
		{"slash", "SwitchName=s/0 Nodes=a\n", `topology.conf:1:12: the switch name "s/0" has '/' at byte 2; a location name holds only A-Z a-z 0-9 . _ : -`},
		{"long switch name", "SwitchName=" + strings.Repeat("s", 65) + " Nodes=a\n", "topology.conf:1:12: the switch name is not a location name: "},
		{"odd byte in a child", "SwitchName=top Switches=a+b\n", `topology.conf:1:25: the child switch name is not a location name: "a+b": name 1 has "+" at byte 2`},
		{"hostlist", "SwitchName=s0 Nodes=a,b[1-\n", `topology.conf:1:27: Nodes="a,b[1-" is not a host list: a number expected in the bracket group`},
		{"host name", "SwitchName=s0 Nodes=a,b@c\n", `topology.conf:1:21: host name "b@c" has "@" at byte 2; only A-Z a-z 0-9 . _ : -`},
		{"unknown key", "SwitchName=s0 Nodes=a Speed=1\n", `topology.conf:1:23: unknown key "Speed"=; a SwitchName line takes Switches=, Nodes= and LinkSpeed=`},
		{"key twice", "SwitchName=s0 Nodes=a nodes=b\n", "topology.conf:1:23: nodes= twice on the line"},
		{"two switches", "SwitchName=s0 SwitchName=s1\n", "topology.conf:1:15: a second SwitchName= on the line; one switch per line"},
		{"link speed", "SwitchName=s0 LinkSpeed=fast Nodes=a\n", `topology.conf:1:25: LinkSpeed="fast" is not a number of 0 to 4294967295`},
		{"block in a tree", "SwitchName=s Nodes=a\nBlockName=b1 Nodes=b\n", "topology.conf:2:1: BlockName= in a file of SwitchName= lines: a file is the topology/tree plugin's or the topology/block plugin's, not both"},
		{"tree in blocks", "BlockSizes=4\nSwitchName=s Nodes=a\n", "topology.conf:2:1: SwitchName= in a file of BlockName= lines: a file is the topology/tree plugin's or the topology/block plugin's, not both"},
		{"block key", "BlockName=b1 Nodes=a Switches=b\n", "topology.conf:1:22: unknown key \"Switches\"=; a BlockName line takes Nodes="},
		{"block sizes", "BlockSizes=4,x\n", "topology.conf:1:12: BlockSizes=\"4,x\" is not a list of block sizes (numbers separated by commas)"},
		{"block twice", "BlockName=b1 Nodes=a\nBlockName=b1 Nodes=b\n", "topology.conf:2:11: block \"b1\" is defined again; first on line 1"},
		{"scontrol level", "SwitchName=s Level=0 LinkSpeed=1 Nodes=a\nSwitchName=t LinkSpeed=1 Switches=s\n", "topology.conf:2:12: switch \"t\" has no Level=: scontrol show topology gives every switch's"},
		{"scontrol leaf with switches", "SwitchName=s Level=0 LinkSpeed=1 Switches=t\n", "topology.conf:1:43: switch \"s\" has Level=0, a leaf, and Switches="},
		{"include", "Include /etc/slurm/more.conf\n", "topology.conf:1:1: Include lines are not followed: pass the included file itself, or the files concatenated"},
		{"operator", "SwitchName=s0 Nodes+=a\n", "topology.conf:1:20: Nodes+=: topology.conf takes KEY=VALUE, not +="},
		{"no '='", "SwitchName s0\n", `topology.conf:1:12: '=' expected after the key "SwitchName"`},
		{"no value", "SwitchName=s0 Nodes=\n", "topology.conf:1:21: Nodes= has no value"},
		{"open quote", "SwitchName=\"s0 Nodes=a\n", "topology.conf:1:12: a '\"' without the '\"' that ends the value"},
		{"after quote", "SwitchName=\"s0\"x Nodes=a\n", `topology.conf:1:16: "x" right after a quoted value; a blank expected`},
		{"stray byte", "SwitchName=s0 =a\n", `topology.conf:1:15: "=" where a KEY=VALUE pair was expected`},
		{"escape", "SwitchName=s\\#0 Nodes=a\n", `topology.conf:1:12: the switch name is not a location name: "s\\#0": name 1 has "\\" at byte 2`},
		{"continued at the end", "# a\nSwitchName=s0 \\\n  Nodes=a \\\n", "topology.conf:2: the file ends inside a line continued with '\\'"},
		{"error on a continuation", "SwitchName=s0 \\\n  Nodes=a \\\n  Bogus=1\n", `topology.conf:3:3: unknown key "Bogus"=`},
		{"long line", long, "topology.conf:1: the line has 65556 bytes, more than the 64 KiB a line may have"},
		{"long continued line", "SwitchName=s0 \\\n" + strings.Repeat("    \\\n", 10) + strings.Repeat("Nodes=a \\\n", 9000) + "\n",
			"topology.conf:1: the line, with the lines that continue it, has more than the 64 KiB a line may have"},
		{"hostlist bomb", "SwitchName=s0 Nodes=a[0-999999]b[0-9]\n", `topology.conf:1:21: Nodes="a[0-999999]b[0-9]" gives more names than the file may have (1000000, hostlists expanded)`},
		{"bomb over lines", "SwitchName=s0 Nodes=a[0-599999]\nSwitchName=s1 Nodes=b[0-599999]\n", "topology.conf:2:22: Nodes=\"b[0-599999]\" gives more names"},
		{"long host names", "SwitchName=s0 Nodes=a," + strings.Repeat("n", 300) + "[1-2]\n",
			`topology.conf:1:23: Nodes="a,` + strings.Repeat("n", 38) + `"... gives names of 301 bytes, more than the 255 a name may have (refused before it is expanded)`},
		{"long child names", "SwitchName=top Switches=" + strings.Repeat("s", 64) + "[1-2]\n",
			`topology.conf:1:25: Switches="` + strings.Repeat("s", 40) + `"... gives names of 65 bytes, more than the 64 a name may have (refused before it is expanded)`},
		{"names over 64 MiB", "SwitchName=s0 Nodes=" + strings.Repeat("h", 249) + "[000000-199999]\nSwitchName=s1 Nodes=" + strings.Repeat("g", 249) + "[000000-099999]\n",
			`topology.conf:2:21: Nodes="` + strings.Repeat("g", 40) + `"... gives 100000 names of up to 255 bytes: with the lists before it, up to 76500000 bytes of names (names times the longest), more than the 64 MiB a file's names may take (refused before it is expanded)`},
		{"utf-8", "SwitchName=sw\u00e9 Nodes=a\n", `topology.conf:1:12: the switch name is not a location name: "sw\xc3\xa9": name 1 has "\xc3" at byte 3`},
	}
	checkMalformed(t, location.ParseSlurm, "topology.conf", cases)
}

func TestSlurmRefusesAFileOver64MiB(t *testing.T) {
	data := make([]byte, 65<<20)
	_, err := location.ParseSlurm("big.conf", data)
	assert.EqualError(t, err, "big.conf: has 68157440 bytes, more than the 64 MiB a file may have")
}
