package location_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
)

// parser is ParseEC2 or ParseSlurm.
type parser func(path string, data []byte) (*location.Topology, error)

// mustParse is parse's topology of text, read as the file path.
func mustParse(t *testing.T, parse parser, path, text string) *location.Topology {
	t.Helper()
	topo, err := parse(path, []byte(text))
	require.NoError(t, err)
	return topo
}

func parseEC2(t *testing.T, text string) *location.Topology {
	t.Helper()
	return mustParse(t, location.ParseEC2, "topology.json", text)
}

func parseSlurm(t *testing.T, text string) *location.Topology {
	t.Helper()
	return mustParse(t, location.ParseSlurm, "topology.conf", text)
}

// parseFile is parse's topology of the file at path.
func parseFile(t *testing.T, parse parser, path string) *location.Topology {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return mustParse(t, parse, path, string(data))
}

// malformed is a file parse refuses: its text and the start of the error.
type malformed struct {
	name, text, want string
}

// checkMalformed checks that parse refuses each case, read as the file
// path, with a *location.Error that starts with the case's want.
func checkMalformed(t *testing.T, parse parser, path string, cases []malformed) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(path, []byte(c.text))
			require.Error(t, err)
			var le *location.Error
			require.ErrorAs(t, err, &le)
			assert.True(t, strings.HasPrefix(err.Error(), c.want), "got  %s\nwant %s", err, c.want)
		})
	}
}

// Golden tests of the readers of issue 36, each on a file written for
// this test from the form its vendor documents (the source is named in
// each test). Each is also read by Parse("auto"), which must tell it
// apart by content alone and give the same.

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// golden parses path as source and by "auto", and checks both give want.
func golden(t *testing.T, source, path string, opts location.Options, want []string) *location.Topology {
	t.Helper()
	data := read(t, path)
	topo, err := location.Parse(source, path, data, opts)
	require.NoError(t, err)
	assert.Equal(t, want, locationsOf(topo))
	auto, err := location.Parse("auto", path, data, opts)
	require.NoError(t, err)
	assert.Equal(t, topo.Source, auto.Source)
	assert.Equal(t, want, locationsOf(auto))
	// With a byte-order mark, the same.
	bom, err := location.Parse("auto", path, append([]byte("\ufeff"), data...), opts)
	require.NoError(t, err)
	assert.Equal(t, want, locationsOf(bom))
	return topo
}

// The shape of the AWS CLI's describe-capacity-reservation-topology
// output, as the EC2 API Reference documents DescribeCapacityReservationTopology
// (CapacityReservations[]: CapacityReservationId, CapacityBlockId, State,
// InstanceType, GroupName, NetworkNodes, AvailabilityZoneId,
// AvailabilityZone; NetworkNodes empty when the state is neither active
// nor pending).
func TestEC2ReservationGolden(t *testing.T) {
	topo := golden(t, "ec2-reservation", "testdata/ec2-reservation.json", location.Options{}, []string{
		"cr-0a1b2c3d4e5f60001=nn-0f1e2d3c4b5a69780/nn-1a2b3c4d5e6f70811/nn-2aaaaaaaaaaaaaaa1",
		"cr-0a1b2c3d4e5f60002=nn-0f1e2d3c4b5a69780/nn-1a2b3c4d5e6f70811/nn-2aaaaaaaaaaaaaaa2",
		"cr-0a1b2c3d4e5f60003!",
	})
	assert.Equal(t, "ec2-reservation", topo.Source)
	h, ok := topo.Lookup("cb-0f9e8d7c6b5a40002") // its Capacity Block
	require.True(t, ok)
	assert.Equal(t, "cr-0a1b2c3d4e5f60002", h.Name)
	assert.Equal(t, 17, h.Line)
	h, _ = topo.Lookup("cr-0a1b2c3d4e5f60003")
	assert.Contains(t, h.Reason, "a state other than active or pending")

	// A Capacity Block two reservations of different locations share
	// gives no location, naming both; of one location, that location.
	two := func(nn2 string) string {
		return `{"CapacityReservations": [` +
			`{"CapacityReservationId": "cr-1", "CapacityBlockId": "cb-1", "State": "active", "NetworkNodes": ["nn-a", "nn-b"]},` + "\n" +
			`{"CapacityReservationId": "cr-2", "CapacityBlockId": "cb-1", "State": "active", "NetworkNodes": ["nn-a", "` + nn2 + `"]}]}`
	}
	topo, err := location.ParseEC2Reservation("r.json", []byte(two("nn-c")))
	require.NoError(t, err)
	h, ok = topo.Lookup("cb-1")
	require.True(t, ok)
	assert.Equal(t, "", h.Location)
	assert.Equal(t, `"cb-1" names two hosts of different locations, "cr-1" (line 1) at nn-a/nn-b and "cr-2" (line 2) at nn-a/nn-c, so it has no single location`, h.Reason)
	topo, err = location.ParseEC2Reservation("r.json", []byte(two("nn-b")))
	require.NoError(t, err)
	h, _ = topo.Lookup("cb-1")
	assert.Equal(t, "nn-a/nn-b", h.Location)

	_, err = location.ParseEC2Reservation("r.json", []byte(`{"CapacityReservations": [{"State": "active"}]}`))
	assert.EqualError(t, err, `r.json:1:27: a Capacity Reservation without "CapacityReservationId"`)
	_, err = location.ParseEC2Reservation("r.json", []byte(`{"Instances": []}`))
	assert.EqualError(t, err, `r.json:1:1: a response without "CapacityReservations": not the output of DescribeCapacityReservationTopology`)
}

// EKS's node labels as the EKS User Guide documents them ("Place
// distributed AI/ML workloads with network topology labels"):
// topology.k8s.aws/network-node-layer-1 (the top) to -3, and -4 on
// instance types of four layers; providerID aws:///ZONE/INSTANCE-ID.
func TestK8sEKSGolden(t *testing.T) {
	topo := golden(t, "k8s", "testdata/k8s-eks.json", location.Options{}, []string{
		// Layer 4, which its peer has, is missing: a trn1 has three
		// layers, located by them as DescribeInstanceTopology's three
		// NetworkNodes locate it (D25: a shorter path is a group of its
		// own below its depth).
		"ip-10-0-1-11.us-west-2.compute.internal=nn-e50490a237cb0f01a/nn-8e3b1c6a5f6d04b12/nn-3d9f2a7c1e4b06a31",
		"ip-10-0-1-12.us-west-2.compute.internal=nn-e50490a237cb0f01a/nn-8e3b1c6a5f6d04b12/nn-3d9f2a7c1e4b06a32/nn-7a1b2c3d4e5f60a41",
		"ip-10-0-2-7.us-west-2.compute.internal!",
	})
	assert.Empty(t, topo.Hosts[0].Reason)
	// A layer missing above one the node has is still no location.
	gap, err := location.ParseK8s("n.json", []byte(`{"items": [`+
		`{"metadata": {"name": "a", "labels": {"topology.k8s.aws/network-node-layer-1": "t", "topology.k8s.aws/network-node-layer-3": "l"}}},`+
		`{"metadata": {"name": "b", "labels": {"topology.k8s.aws/network-node-layer-1": "t", "topology.k8s.aws/network-node-layer-2": "s", "topology.k8s.aws/network-node-layer-3": "l"}}}]}`), location.K8sOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a!", "b=t/s/l"}, locationsOf(gap))
	h, ok := topo.Lookup("i-0a1b2c3d4e5f60002") // by its instance id
	require.True(t, ok)
	assert.Equal(t, "ip-10-0-1-12.us-west-2.compute.internal", h.Name)
	h, ok = topo.Lookup("10.0.1.11") // by its InternalIP
	require.True(t, ok)
	assert.Equal(t, "ip-10-0-1-11.us-west-2.compute.internal", h.Name)
	h, ok = topo.Lookup("ip-10-0-2-7")
	require.True(t, ok)
	// An instance id two nodes of different locations share finds no
	// location.
	shared, err := location.ParseK8s("n.json", []byte(`{"items": [`+
		`{"metadata": {"name": "a", "labels": {"network.topology.nvidia.com/leaf": "l1"}}, "spec": {"providerID": "aws:///z/i-0123456789abcdef0"}},`+
		`{"metadata": {"name": "b", "labels": {"network.topology.nvidia.com/leaf": "l2"}}, "spec": {"providerID": "aws:///z/i-0123456789abcdef0"}}]}`), location.K8sOptions{})
	require.NoError(t, err)
	s, ok := shared.Lookup("i-0123456789abcdef0")
	require.True(t, ok)
	assert.Equal(t, "", s.Location)
	assert.Contains(t, s.Reason, `"a" (line 1) at l1 and "b" (line 1) at l2`)
	assert.Equal(t, "the node has no label topology.k8s.aws/network-node-layer-1 (EKS's topology.k8s.aws/network-node-layer-1..4)", h.Reason)

	// --labels, outermost first, in place of EKS's; a node lacking one
	// that another node has has no location.
	topo, err = location.ParseK8s("n.json", read(t, "testdata/k8s-eks.json"), location.K8sOptions{Labels: []string{"topology.k8s.aws/network-node-layer-2", "node.kubernetes.io/instance-type"}})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"ip-10-0-1-11.us-west-2.compute.internal=nn-8e3b1c6a5f6d04b12/trn2.48xlarge",
		"ip-10-0-1-12.us-west-2.compute.internal!",
		"ip-10-0-2-7.us-west-2.compute.internal!",
	}, locationsOf(topo))
	// A label of --labels that no node has is an error, not a level left out.
	_, err = location.ParseK8s("n.json", read(t, "testdata/k8s-eks.json"), location.K8sOptions{Labels: []string{"topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-9"}})
	assert.EqualError(t, err, `n.json: no node has the label "topology.k8s.aws/network-node-layer-9" of --labels`)
}

// Topograph's labels as NVIDIA's Topograph documents them ("Topograph in
// Kubernetes": network.topology.nvidia.com/{accelerator,leaf,spine,core},
// its example nvl1/s1/s2/s3; "Node labels and annotations":
// fabric.topograph.run/tier-N, tier 0 nearest the node, and
// accelerator.topograph.run/domain).
func TestK8sTopographGolden(t *testing.T) {
	golden(t, "k8s", "testdata/k8s-topograph.json", location.Options{}, []string{"gpu-node-1=s3/s2/s1", "gpu-node-2=s3/s2/s4"})
	golden(t, "k8s", "testdata/k8s-topograph.json", location.Options{K8s: location.K8sOptions{Accelerator: true}},
		[]string{"gpu-node-1=s3/s2/s1/nvl1", "gpu-node-2=s3/s2/s4/nvl2"})
	golden(t, "k8s", "testdata/k8s-fabric.json", location.Options{}, []string{
		"gpu-node-1=sw-core-1/sw-spine-1/sw-leaf-1", "gpu-node-2=sw-core-1/sw-spine-1/sw-leaf-2"})
	golden(t, "k8s", "testdata/k8s-fabric.json", location.Options{K8s: location.K8sOptions{Accelerator: true}}, []string{
		"gpu-node-1=sw-core-1/sw-spine-1/sw-leaf-1/nvl1", "gpu-node-2=sw-core-1/sw-spine-1/sw-leaf-2/nvl1"})

	// One Node (kubectl get node NAME -o json).
	topo, err := location.ParseK8s("n.json", []byte(`{"kind": "Node", "metadata": {"name": "n1", "labels": {"network.topology.nvidia.com/leaf": "l1"}}, "spec": {"providerID": "aws:///us-east-1a/i-0123456789abcdef0"}}`), location.K8sOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"n1=l1"}, locationsOf(topo)) // no node has a core or a spine: the leaf is the one level
	_, ok := topo.Lookup("i-0123456789abcdef0")
	assert.True(t, ok)

	// A level some nodes lack, above one they have: no location.
	topo, err = location.ParseK8s("n.json", []byte(`{"items": [`+
		`{"metadata": {"name": "a", "labels": {"network.topology.nvidia.com/spine": "s1", "network.topology.nvidia.com/leaf": "l1"}}},`+
		`{"metadata": {"name": "b", "labels": {"network.topology.nvidia.com/leaf": "l2"}}}]}`), location.K8sOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a=s1/l1", "b!"}, locationsOf(topo))
	assert.Equal(t, "the node has no label network.topology.nvidia.com/spine (Topograph's network.topology.nvidia.com/{core,spine,leaf})", topo.Hosts[1].Reason)
}

// topology.conf(5)'s topology/block lines: BlockName= with Nodes=, and
// BlockSizes=; a block is one level.
func TestSlurmBlockGolden(t *testing.T) {
	golden(t, "slurm", "testdata/topology-block.conf", location.Options{}, []string{
		"trn01=block1", "trn02=block1", "trn03=block1", "trn04=block1",
		"trn05=block2", "trn06=block2", "trn07=block2", "trn08=block2",
	})
	topo, err := location.ParseSlurm("t.conf", []byte("BlockName=b1 Nodes=a,b\nBlockName=b2 Nodes=b\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a=b1", "b!"}, locationsOf(topo))
	assert.Equal(t, `listed in two blocks, "b1" (line 1) and "b2" (line 2), so it has no single block`, topo.Hosts[1].Reason)
}

// scontrol show topology's lines as Slurm prints them
// (src/plugins/topology/tree/topology_tree.c: "SwitchName=%s Level=%u
// LinkSpeed=%u", then Nodes= and Switches=; an upper switch lists every
// node below it; topology_block.c: "BlockName=%s BlockIndex=%u Nodes=%s
// BlockSize=%u", AggregatedBlock= for the larger sizes).
func TestScontrolTopologyGolden(t *testing.T) {
	golden(t, "slurm", "testdata/scontrol-topology.txt", location.Options{}, []string{
		"trn01=s2/s0", "trn02=s2/s0", "trn03=s2/s0", "trn04=s2/s0",
		"trn05=s2/s1", "trn06=s2/s1", "trn07=s2/s1", "trn08=s2/s1",
	})
	golden(t, "slurm", "testdata/scontrol-block.txt", location.Options{}, []string{
		"trn01=block1", "trn02=block1", "trn03=block1", "trn04=block1",
		"trn05=block2", "trn06=block2", "trn07=block2", "trn08=block2",
	})
	// scontrol show topology trn01 prints trn01's switches alone; spine1's
	// Switches= names leaf2, which it does not print: a switch whose
	// nodes are not known, skipped.
	golden(t, "slurm", "testdata/scontrol-topology-node.txt", location.Options{}, []string{
		"trn01=spine1/leaf1", "trn02=spine1/leaf1", "trn03=spine1/leaf1", "trn04=spine1/leaf1",
	})
	// A leaf printed without the switch above it: its chain is not whole.
	topo, err := location.ParseSlurm("t.txt", []byte("SwitchName=leaf1 Level=0 Nodes=a\nSwitchName=leaf2 Level=0 Nodes=b\nSwitchName=spine2 Level=1 Nodes=b,c Switches=leaf[2-3]\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a!", "b=spine2/leaf2"}, locationsOf(topo))
	assert.Equal(t, `switch "leaf1" (line 1, Level=0) is printed without the switch above it (the output names switches it does not print, such as "leaf3", as scontrol show topology NODE does for another node's), so its chain of switches is not whole`, topo.Hosts[0].Reason)
}

// topology.yaml(5) (Slurm 25.05): a list of topologies, the
// cluster_default one read unless one is named; tree and block read,
// flat placing no host, ring and torus3d refused naming the kind.
func TestSlurmYAMLGolden(t *testing.T) {
	golden(t, "slurm", "testdata/topology.yaml", location.Options{}, []string{
		"trn01=root/s1", "trn02=root/s1", "trn03=root/s2", "trn04=root/s2"})
	golden(t, "slurm", "testdata/topology.yaml", location.Options{Slurm: location.SlurmOptions{Topology: "blocks"}}, []string{
		"trn01=b1", "trn02=b1", "trn03=b2", "trn04=b2"})
	data := read(t, "testdata/topology.yaml")
	topo, err := location.ParseSlurmWith("topology.yaml", data, location.SlurmOptions{Topology: "whole"})
	require.NoError(t, err)
	assert.Empty(t, topo.Hosts)
	assert.Equal(t, `topology "whole" is flat (topology/flat): every node is as near as any other, so no host has a location`, topo.Reason)
	for name, want := range map[string]string{
		"rings":   `topology.yaml:30:3: topology "rings" is a ring (topology/ring): its nodes sit in rings, in order, not in groups within groups`,
		"pods":    `topology.yaml:36:3: topology "pods" is a torus3d (topology/torus3d): its nodes have coordinates in a 3-D torus`,
		"missing": `topology.yaml: no topology "missing"; the file has fabric, blocks, whole, rings, pods`,
	} {
		_, err := location.ParseSlurmWith("topology.yaml", data, location.SlurmOptions{Topology: name})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), want, name)
	}
	_, err = location.ParseSlurmWith("t.conf", read(t, "testdata/topology-8.conf"), location.SlurmOptions{Topology: "x"})
	assert.ErrorContains(t, err, "only a topology.yaml names its topologies")
}

func TestSlurmYAMLRefuses(t *testing.T) {
	for name, c := range map[string]struct{ text, want string }{
		"alias": {"- topology: a\n  tree:\n    switches:\n      - switch: &x s1\n        nodes: n1\n      - switch: *x\n",
			"t.yaml:4:17: an anchor (&\"x\"): a topology.yaml is read without anchors and aliases"},
		"alias without its anchor": {"- topology: a\n  tree:\n    switches:\n      - switch: *x\n        nodes: n1\n",
			"t.yaml: an alias (*\"x\") of no anchor: a topology.yaml is read without anchors and aliases"},
		"no default": {"- topology: a\n  flat: true\n- topology: b\n  flat: true\n",
			"t.yaml: no topology has cluster_default: true, so which one to read is not said: name one with --topology (a, b)"},
		"unknown key": {"- topology: a\n  tree:\n    switches:\n      - switch: s1\n        node: n1\n",
			"t.yaml:5:9: unknown key \"node\" in a switch; it takes switch, children, nodes"},
		"two kinds":  {"- topology: a\n  flat: true\n  tree: {}\n", "t.yaml:3:3: topology \"a\" has both flat and tree: a topology has one kind"},
		"name first": {"- cluster_default: true\n  topology: a\n", "t.yaml:1:3: \"topology: NAME\" must be a topology's first key, not \"cluster_default\""},
		"cycle": {"- topology: a\n  tree:\n    switches:\n      - switch: s1\n        children: s2\n      - switch: s2\n        children: s1\n",
			"is below itself"},
		"huge range": {"- topology: a\n  tree:\n    switches:\n      - switch: s1\n        nodes: n[0-999999999]\n",
			"t.yaml:5:17: nodes=\"n[0-999999999]\" gives more names than the file may have"},
		"not yaml": {"- topology: a\n  tree: [\n", "t.yaml"},
	} {
		_, err := location.ParseSlurmYAML("t.yaml", []byte(c.text), "")
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.want, name)
	}
	_, err := location.ParseSlurmYAML("t.yaml", make([]byte, location.MaxYAMLSize+1), "")
	assert.EqualError(t, err, "t.yaml: has 1048577 bytes, more than the 1 MiB a topology.yaml may have")
}

// SLURM_TOPOLOGY_ADDR and its pattern as srun(1) documents them: the
// names from the top switch down to the node, period-separated, and
// "switch.switch.node".
func TestSlurmEnvGolden(t *testing.T) {
	topo, err := location.FromSlurmEnv("s2.s0.trn01", "switch.switch.node")
	require.NoError(t, err)
	assert.Equal(t, []string{"trn01=s2/s0"}, locationsOf(topo))
	// topology/block's; a branch that skips a level; two switches at one.
	topo, err = location.FromSlurmEnv("b8.tux1", "block.node")
	require.NoError(t, err)
	assert.Equal(t, []string{"tux1=b8"}, locationsOf(topo))
	topo, err = location.FromSlurmEnv("top..leaf1.n1", "switch.switch.switch.node")
	require.NoError(t, err)
	assert.Equal(t, []string{"n1=top/leaf1"}, locationsOf(topo))
	topo, err = location.FromSlurmEnv("top.s[1-2].n1", "switch.switch.node")
	require.NoError(t, err)
	assert.Equal(t, []string{"n1!"}, locationsOf(topo))
	assert.Contains(t, topo.Hosts[0].Reason, `names "s[1-2]" at one level`)
	// A pattern of switches whose every name is empty: not "the node
	// alone", which is a pattern of "node".
	topo, err = location.FromSlurmEnv("..trn01", "switch.switch.node")
	require.NoError(t, err)
	assert.Equal(t, `SLURM_TOPOLOGY_ADDR is "..trn01": it names no switch at any of the 2 switch levels of SLURM_TOPOLOGY_ADDR_PATTERN, "switch.switch.node"`, topo.Hosts[0].Reason)
	topo, err = location.FromSlurmEnv("trn01", "node")
	require.NoError(t, err)
	assert.Equal(t, []string{"trn01!"}, locationsOf(topo))
	for _, c := range []struct{ addr, pattern, want string }{
		{"", "", "SLURM_TOPOLOGY_ADDR: is not set, nor SLURM_TOPOLOGY_ADDR_PATTERN"},
		{"s0.n1", "switch.switch.node", `SLURM_TOPOLOGY_ADDR: "s0.n1" has 2 period-separated names and SLURM_TOPOLOGY_ADDR_PATTERN, "switch.switch.node", has 3: the counts differ`},
		{"s0.n1", "node.switch", `SLURM_TOPOLOGY_ADDR_PATTERN: "node.switch" has "node" before its end`},
		{"s/0.n1", "switch.node", "SLURM_TOPOLOGY_ADDR: the switch name"},
	} {
		_, err := location.FromSlurmEnv(c.addr, c.pattern)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}

func TestDetectRefuses(t *testing.T) {
	_, err := location.Detect("x", []byte("hello\n"))
	assert.ErrorContains(t, err, "x: not a file locate knows")
	_, err = location.Detect("x", []byte(`{"Reservations": [{"Instances": []}]}`))
	assert.ErrorContains(t, err, "x: the output of aws ec2 describe-instances")
	_, err = location.Parse("auto", "x", []byte(`{"apiVersion": "v1", "items": [{"kind": "Pod", "metadata": {"name": "p"}}], "kind": "List"}`), location.Options{})
	assert.EqualError(t, err, `x:1:41: a "Pod", not a Node: locate reads kubectl get nodes -o json`)
	_, err = location.Detect("x", []byte(`{"a": 1}`))
	assert.ErrorContains(t, err, `x: JSON without "Instances"`)
}

// Issue 36, hostile inputs: each new reader refuses a huge node range, a
// cycle, deep nesting and an oversized document, naming the file and,
// where there is one, the line.
func TestNewReadersRefuseHostileInputs(t *testing.T) {
	deepJSON := func(head string) []byte {
		return []byte(head + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "}]}")
	}
	for _, c := range []struct {
		name, source, text, want string
	}{
		{"yaml range", "slurm", "- topology: a\n  block:\n    blocks:\n      - block: b\n        nodes: n[0-999999999]\n", "t:5:17: nodes=\"n[0-999999999]\" gives more names than the file may have"},
		{"scontrol range", "slurm", "SwitchName=s Level=0 LinkSpeed=1 Nodes=n[0-999999999]\n", "t:1:41: Nodes=\"n[0-999999999]\" gives more names than the file may have"},
		{"block range", "slurm", "BlockName=b Nodes=n[0-999999999]\n", "t:1:20: Nodes=\"n[0-999999999]\" gives more names than the file may have"},
		{"yaml cycle", "slurm", "- topology: a\n  tree:\n    switches:\n      - switch: s1\n        children: s2\n      - switch: s2\n        children: s1\n", "t:4:17: switch \"s1\" is below itself"},
		{"scontrol cycle", "slurm", "SwitchName=a Level=1 LinkSpeed=1 Switches=b\nSwitchName=b Level=1 LinkSpeed=1 Switches=a\n", "t:1:12: switch \"a\" is below itself"},
		{"yaml nesting", "slurm", "- topology: a\n  tree: " + strings.Repeat("[", 20_000) + "\n", "t:2:"},
		{"k8s nesting", "k8s", string(deepJSON(`{"items": [{"metadata": {"name": "n"}, "spec": {"x": `)), "t:1:"},
		{"reservation nesting", "ec2-reservation", string(deepJSON(`{"CapacityReservations": [{"CapacityReservationId": "cr-1", "x": `)), "t:1:"},
	} {
		_, err := location.Parse(c.source, "t", []byte(c.text), location.Options{})
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	big := make([]byte, location.MaxFileSize+1)
	for _, source := range []string{"ec2-reservation", "k8s", "slurm"} {
		_, err := location.Parse(source, "t", big, location.Options{})
		assert.ErrorContains(t, err, "t: has 67108865 bytes, more than the", source)
	}
}

// The locations file takes a byte-order mark too.
func TestReadLocationsSkipsAByteOrderMark(t *testing.T) {
	entries, err := location.ReadLocations(strings.NewReader("\ufefftrn001 spine0/leaf1\ntrn002 spine0/leaf2\n"))
	require.NoError(t, err)
	require.Len(t, entries, 2)
	assert.Equal(t, location.Entry{Host: "trn001", Location: "spine0/leaf1", Line: 1}, entries[0])
	_, err = location.ReadLocations(strings.NewReader("\ufefftrn001 a b\n"))
	assert.EqualError(t, err, `input:1:13: "b" after HOST LOCATION; a line holds two fields`)
}
