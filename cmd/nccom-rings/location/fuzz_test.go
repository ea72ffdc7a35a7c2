package location

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/nccomring/libnccomring/internal/fuzzseed"
	"github.com/nccomring/libnccomring/nodeorder"
)

// checkTopology is what every parse that succeeds must give: hosts with a
// valid name, a valid location or a reason, each found by Lookup.
func checkTopology(t *testing.T, topo *Topology) {
	for i, h := range topo.Hosts {
		if err := CheckHost(h.Name); err != nil {
			t.Fatalf("host %d: %v", i, err)
		}
		if (h.Location == "") == (h.Reason == "") {
			t.Fatalf("host %q: location %q, reason %q: want exactly one", h.Name, h.Location, h.Reason)
		}
		if h.Location != "" {
			if _, err := nodeorder.Parse(h.Location); err != nil {
				t.Fatalf("host %q: %v", h.Name, err)
			}
		}
		if got, ok := topo.Lookup(h.Name); !ok || got != h {
			t.Fatalf("Lookup(%q) = %+v, %v", h.Name, got, ok)
		}
	}
}

// checkError is what every refusal must be: an *Error naming the file
// and, when it names a line, one of the file's.
func checkError(t *testing.T, err error, data []byte) {
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%T %v: want an *Error", err, err)
	}
	if e.File != "fuzz" || e.Msg == "" {
		t.Fatalf("%+v", e)
	}
	if lines := bytes.Count(data, []byte{'\n'}) + 1; e.Line < 0 || e.Line > lines || e.Col < 0 {
		t.Fatalf("%v: line %d of %d", err, e.Line, lines)
	}
}

// fuzzParser fuzzes parse from the fixture at path and seeds: what it
// gives must pass checkTopology, what it refuses checkError.
func fuzzParser(f *testing.F, path string, seeds []string, parse func(name string, data []byte) (*Topology, error)) {
	c := fuzzseed.New(f)
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	c.Add(data)
	for _, s := range seeds {
		c.Add([]byte(s))
	}
	c.Fuzz(func(t *testing.T, data []byte) {
		topo, err := parse("fuzz", data)
		if err != nil {
			checkError(t, err, data)
			return
		}
		checkTopology(t, topo)
	})
}

func FuzzParseEC2(f *testing.F) {
	fuzzParser(f, "testdata/ec2-8.json", []string{
		`[{"Instances": [{"InstanceId": "i-1", "NetworkNodes": ["a", "b"]}], "NextToken": "x"}, {"Instances": []}]`,
		`{"Instances": [{"InstanceId": "i-1", "NetworkNodes": null, "X": [[{"y": 1e9}]]}]}{"Instances": []}`,
		`{"Instances": [{"InstanceId": "i-1"}, {"InstanceId": "I-1"}]}`,
		`{"Instances": [{"InstanceId": "i-1", "NetworkNodes": ["1","2","3","4","5","6","7","8","9"]}]}`,
		`{"Instances": [{"InstanceId": "i-\u0041", "NetworkNodes": ["a/b"]}]}`,
		"{\"Instances\": [\n{\"InstanceId\": \"i-1\",}]}",
		`[[[[[[[[[[]]]]]]]]]]`, ``, `null`,
	}, ParseEC2)
}

func FuzzParseSlurm(f *testing.F) {
	fuzzParser(f, "testdata/topology-8.conf", []string{
		"SwitchName=core Switches=agg[1-2]\nSwitchName=agg1 Switches=leaf1\nSwitchName=agg2 Nodes=n[01-04]\nSwitchName=leaf1 Nodes=n05,n[06-07]\n",
		"switchname = \"s0\" NODES=a,b \\\n  LinkSpeed=1 # c\r\n",
		"SwitchName=a Switches=b\nSwitchName=b Switches=a\n",
		"SwitchName=s1 Switches=m\nSwitchName=s2 Switches=m\nSwitchName=m Nodes=x\n",
		"SwitchName=a Nodes=x\nSwitchName=b Nodes=x\n",
		"SwitchName=s0 Nodes=a[0-999999]b[0-9]\n",
		"BlockName=b Nodes=x\n", "Include x\n", "SwitchName=s\\#0\n", "SwitchName=s0 \\",
	}, func(name string, data []byte) (*Topology, error) { return parseSlurm(name, data, 10_000) })
}

// FuzzHostlist checks the expansion against the count parseHostlist
// makes, under a small budget.
func FuzzHostlist(f *testing.F) {
	c := fuzzseed.New(f)
	for _, s := range []string{"trn[001-016,020]", "rack[1-2]n[01-02],x", "a,,b", "a[3-1]", "n[8-10]", "[1-3]", "a[0-99]b[0-99]"} {
		c.Add(s)
	}
	c.Fuzz(func(t *testing.T, value string) {
		const budget = 2000
		lim := hostlistLimits{names: budget, nameLen: 64, bytes: 20_000}
		names, size, err := expandHostlist(value, lim)
		if err != nil {
			var he *hostlistError
			if !errors.As(err, &he) || he.Off < 0 || he.Off > len(value) {
				t.Fatalf("%q: %v", value, err)
			}
			return
		}
		if len(names) == 0 || len(names) > budget {
			t.Fatalf("%q: %d names", value, len(names))
		}
		if !strings.ContainsAny(value, "[], \t\n\r") && (len(names) != 1 || names[0] != value) {
			t.Fatalf("%q: %q", value, names)
		}
		var total uint64
		for _, n := range names {
			if n == "" || strings.ContainsAny(n, "[], \t\n\r") || len(n) > 64 {
				t.Fatalf("%q gives %q", value, n)
			}
			total += uint64(len(n))
		}
		if total > size || size > lim.bytes {
			t.Fatalf("%q: names of %d bytes, sized at %d (at most %d)", value, total, size, lim.bytes)
		}
	})
}

// FuzzReadLocations checks that what is read writes back to itself.
func FuzzReadLocations(f *testing.F) {
	c := fuzzseed.New(f)
	for _, s := range []string{
		"# x\n\ntrn001 spine0/leaf1\n  trn002\tspine0/leaf2   # c\r\n3 a:b/c.d",
		"trn001 a\nTRN001.x b\n", "a b c\n", "a\n", "a 1/2/3/4/5/6/7/8/9\n", "a b\x00\n",
	} {
		c.Add([]byte(s))
	}
	c.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ReadLocations(bytes.NewReader(data))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Line < 1 || e.Line > bytes.Count(data, []byte{'\n'})+1 {
				t.Fatalf("%v", err)
			}
			return
		}
		var out bytes.Buffer
		for _, e := range entries {
			fmt.Fprintf(&out, "%s %s\n", e.Host, e.Location)
		}
		again, err := ReadLocations(&out)
		if err != nil || len(again) != len(entries) {
			t.Fatalf("reading back: %v (%d of %d)", err, len(again), len(entries))
		}
		for i := range again {
			if again[i].Host != entries[i].Host || again[i].Location != entries[i].Location || again[i].Line != i+1 {
				t.Fatalf("entry %d: %+v, then %+v", i, entries[i], again[i])
			}
		}
	})
}

func FuzzParseEC2Reservation(f *testing.F) {
	fuzzParser(f, "testdata/ec2-reservation.json", []string{
		`{"CapacityReservations": [{"CapacityReservationId": "cr-1", "CapacityBlockId": null, "NetworkNodes": ["a"]}], "NextToken": "x"}`,
		`{"CapacityReservations": [{"CapacityReservationId": "cr-1", "CapacityBlockId": "cb-1"}, {"CapacityReservationId": "cb-1"}]}`,
		"\ufeff{\"CapacityReservations\": []}", `[[[[[[[[[[]]]]]]]]]]`, ``,
	}, ParseEC2Reservation)
}

func FuzzParseK8s(f *testing.F) {
	fuzzParser(f, "testdata/k8s-eks.json", []string{
		`{"items": [{"metadata": {"name": "n1", "labels": {"fabric.topograph.run/tier-0": "a", "fabric.topograph.run/tier-3": "b"}}}]}`,
		`{"kind": "Node", "metadata": {"name": "n1", "labels": {"network.topology.nvidia.com/leaf": "l"}}, "spec": {"providerID": "aws:///z/i-0123456789abcdef0"}}`,
		`{"items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "A"}}]}`,
		`{"items": [{"metadata": {"name": "a", "labels": {"topology.k8s.aws/network-node-layer-1": "x", "topology.k8s.aws/network-node-layer-3": "y"}}}]}`,
		`{"items": [{"spec": {"x": [[[[[[[[]]]]]]]]}}]}`, ``, `[]`,
	}, func(name string, data []byte) (*Topology, error) { return ParseK8s(name, data, K8sOptions{}) })
}

func FuzzParseSlurmYAML(f *testing.F) {
	fuzzParser(f, "testdata/topology.yaml", []string{
		"- topology: a\n  tree:\n    switches:\n      - switch: s1\n        children: s2\n      - switch: s2\n        children: s1\n",
		"- topology: a\n  block:\n    blocks:\n      - block: b\n        nodes: n[1-3]\n",
		"- topology: a\n  tree:\n    switches:\n      - switch: &x s\n      - switch: *x\n",
		"- topology: a\n  cluster_default: true\n  flat: true\n---\n- x\n",
		"[[[[[[[[[[[[[[]]]]]]]]]]]]]]", "a: [b, {c: d}]\n",
	}, func(name string, data []byte) (*Topology, error) { return parseSlurmYAML(name, data, "", 10_000) })
}

func FuzzParseScontrolTopology(f *testing.F) {
	fuzzParser(f, "testdata/scontrol-topology.txt", []string{
		"BlockName=b1 BlockIndex=0 Nodes=n[1-4] BlockSize=4\nAggregatedBlock=b1,b2 BlockIndex=2 Nodes=n[1-8] BlockSize=8\n",
		"SwitchName=a Level=1 LinkSpeed=1 Nodes=n1 Switches=b\nSwitchName=b Level=1 LinkSpeed=1 Nodes=n1 Switches=a\n",
		"BlockName=b Nodes=x\nBlockSizes=4,8\n", "SwitchName=s Level=0 Nodes=n[0-999999999]\n",
	}, func(name string, data []byte) (*Topology, error) { return parseSlurm(name, data, 10_000) })
}

// FuzzSlurmEnv: what FromSlurmEnv gives passes checkTopology, what it
// refuses names one of the two variables.
func FuzzSlurmEnv(f *testing.F) {
	c := fuzzseed.New(f)
	for _, s := range [][2]string{{"s2.s0.n1", "switch.switch.node"}, {"n1", "node"}, {"a.b", "node.switch"}, {"", ""}, {"a/b.n", "switch.node"}} {
		c.Add(s[0], s[1])
	}
	c.Fuzz(func(t *testing.T, addr, pattern string) {
		topo, err := FromSlurmEnv(addr, pattern)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || (e.File != SlurmTopologyAddr && e.File != SlurmTopologyAddrPattern) {
				t.Fatalf("%v", err)
			}
			return
		}
		checkTopology(t, topo)
		if len(topo.Hosts) != 1 {
			t.Fatalf("%d hosts", len(topo.Hosts))
		}
	})
}

// FuzzDetect: every input is one source or refused, and Parse("auto")
// never gives what the source it detects would not.
func FuzzDetect(f *testing.F) {
	c := fuzzseed.New(f)
	for _, p := range []string{"testdata/ec2-8.json", "testdata/k8s-topograph.json", "testdata/topology-block.conf", "testdata/topology.yaml"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		c.Add(data)
	}
	c.Fuzz(func(t *testing.T, data []byte) {
		source, err := Detect("fuzz", data)
		if err != nil {
			checkError(t, err, data)
			return
		}
		if source == "slurm" {
			return // FuzzParseSlurm and FuzzParseSlurmYAML read those
		}
		topo, err := Parse(source, "fuzz", data, Options{})
		if err != nil {
			checkError(t, err, data)
			return
		}
		checkTopology(t, topo)
	})
}
