package location_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
)

// The fixtures of instances files, one cluster of four trn1 instances
// (i-0a1b2c3d4e5f60001..4 at 10.0.1.11..14, in capacity reservation
// cr-0123456789abcdef0), each in the shape its vendor documents:
//
//   - testdata/describe-instances-4.json: the AWS CLI reference's example
//     output of `aws ec2 describe-instances` (Reservations, Groups,
//     Instances with InstanceId, PrivateDnsName, PrivateIpAddress, Tags,
//     OwnerId, ReservationId), with the EC2 API reference's
//     CapacityReservationId, and a Name tag every compute instance shares
//     ("Compute", as a cluster's launch template may give);
//   - testdata/scontrol-nodes-4.txt: `scontrol show nodes` as Slurm
//     24.05 prints it for ParallelCluster's nodes
//     (aws/aws-parallelcluster-cookbook#2876: NodeName, NodeAddr the
//     address, NodeHostName the node name, InstanceId where slurmd was
//     given one);
//   - testdata/pods-4.json: `kubectl get pods -o json`, a List of Pod v1
//     (Kubernetes API reference: metadata.name, spec.nodeName,
//     status.hostIP, status.podIP), MPI Operator workers and a launcher
//     not yet scheduled.

func readInstances(t *testing.T, path string) *location.Instances {
	t.Helper()
	in, err := location.ReadInstancesFile(path)
	require.NoError(t, err)
	return in
}

func TestDescribeInstancesFixture(t *testing.T) {
	in := readInstances(t, "testdata/describe-instances-4.json")
	assert.Equal(t, location.KindDescribeInstances, in.Kind)
	assert.False(t, in.Truncated)
	require.Len(t, in.Records, 4)
	// "Compute", the Name tag of every instance, is a name of each.
	assert.Equal(t, location.Record{
		Names: []string{"i-0a1b2c3d4e5f60001", "ip-10-0-1-11.us-east-2.compute.internal", "10.0.1.11", "Compute"},
		Where: []string{"cr-0123456789abcdef0"},
		Line:  9,
	}, in.Records[0])
	i, n := in.Find("IP-10-0-1-13")
	assert.Equal(t, 2, i)
	assert.Equal(t, 1, n)
	_, n = in.Find("compute")
	assert.Equal(t, 4, n)
	_, n = in.Find("cr-0123456789abcdef0") // a place, not a name
	assert.Equal(t, 0, n)
}

func TestScontrolNodesFixture(t *testing.T) {
	in := readInstances(t, "testdata/scontrol-nodes-4.txt")
	assert.Equal(t, location.KindScontrolNodes, in.Kind)
	require.Len(t, in.Records, 4)
	assert.Equal(t, []location.Record{
		{Names: []string{"trn1-st-trn1-1", "10.0.1.11", "i-0a1b2c3d4e5f60001"}, Line: 1},
		{Names: []string{"trn1-st-trn1-2", "10.0.1.12"}, Line: 15},
		{Names: []string{"trn1-st-trn1-3", "10.0.1.13"}, Line: 20},
		{Names: []string{"trn1-st-trn1-4", "10.0.1.14"}, Line: 24},
	}, in.Records)

	// One line a node (scontrol -o), and the names that are none.
	in, err := location.ParseInstances("o", []byte("NodeName=a NodeAddr=10.1.1.1 NodeHostName=(null) OS=Linux x #1\nNodeName=b NodeAddr=host-b InstanceId=None\n"))
	require.NoError(t, err)
	assert.Equal(t, location.KindScontrolNodes, in.Kind)
	assert.Equal(t, []location.Record{{Names: []string{"a", "10.1.1.1"}, Line: 1}, {Names: []string{"b", "host-b"}, Line: 2}}, in.Records)
}

func TestPodsFixture(t *testing.T) {
	in := readInstances(t, "testdata/pods-4.json")
	assert.Equal(t, location.KindPods, in.Kind)
	require.Len(t, in.Records, 5)
	assert.Equal(t, location.Record{
		Names: []string{"train-worker-0", "10.0.7.40"},
		Where: []string{"ip-10-0-1-11.us-east-2.compute.internal", "10.0.1.11"},
		Line:  8,
	}, in.Records[0])
	assert.Equal(t, []string{"train-launcher"}, in.Records[4].Names)
	assert.Empty(t, in.Records[4].Where, "not scheduled: no node")
}

func TestInstanceMap(t *testing.T) {
	in, err := location.ParseInstances("map", []byte("\xef\xbb\xbf# HOST INSTANCE\n\ntrn001 i-0a1b2c3d4e5f60001\n  trn002\ti-0a1b2c3d4e5f60002  # c\r\n"))
	require.NoError(t, err)
	assert.Equal(t, location.KindMap, in.Kind)
	assert.Equal(t, []location.Record{
		{Names: []string{"trn001", "i-0a1b2c3d4e5f60001"}, Line: 3},
		{Names: []string{"trn002", "i-0a1b2c3d4e5f60002"}, Line: 4},
	}, in.Records)
}

func hasOf(keys ...string) func(string) bool {
	set := map[string]bool{}
	for _, k := range keys {
		set[location.Key(k)] = true
	}
	return func(name string) bool { return set[location.Key(name)] }
}

func TestJoin(t *testing.T) {
	describe := readInstances(t, "testdata/describe-instances-4.json")
	scontrol := readInstances(t, "testdata/scontrol-nodes-4.txt")
	pods := readInstances(t, "testdata/pods-4.json")
	files := []*location.Instances{scontrol, pods, describe}
	ids := hasOf("i-0a1b2c3d4e5f60001", "i-0a1b2c3d4e5f60002", "i-0a1b2c3d4e5f60003", "i-0a1b2c3d4e5f60004")
	cases := []struct {
		host string
		want location.Joined
	}{
		{"i-0a1b2c3d4e5f60004", location.Joined{Name: "i-0a1b2c3d4e5f60004", Same: []string{"i-0a1b2c3d4e5f60004"}}},
		// Slurm knows this node's instance.
		{"trn1-st-trn1-1", location.Joined{Name: "i-0a1b2c3d4e5f60001", File: "testdata/scontrol-nodes-4.txt", Line: 1, Same: []string{"trn1-st-trn1-1", "i-0a1b2c3d4e5f60001"}}},
		// Slurm knows its address, describe-instances the address's instance.
		{"TRN1-ST-TRN1-2.cluster.pcluster", location.Joined{Name: "i-0a1b2c3d4e5f60002", File: "testdata/describe-instances-4.json", Line: 56, Same: []string{"trn1-st-trn1-2", "i-0a1b2c3d4e5f60002"}}},
		// By DNS name, full or short, and by address.
		{"ip-10-0-1-13", location.Joined{Name: "i-0a1b2c3d4e5f60003", File: "testdata/describe-instances-4.json", Line: 110, Same: []string{"i-0a1b2c3d4e5f60003"}}},
		{"ip-10-0-1-13.us-east-2.compute.internal", location.Joined{Name: "i-0a1b2c3d4e5f60003", File: "testdata/describe-instances-4.json", Line: 110, Same: []string{"i-0a1b2c3d4e5f60003"}}},
		{"10.0.1.14", location.Joined{Name: "i-0a1b2c3d4e5f60004", File: "testdata/describe-instances-4.json", Line: 157, Same: []string{"trn1-st-trn1-4", "i-0a1b2c3d4e5f60004"}}},
		// A pod (as an MPI Operator hostfile names it) to its node, the
		// node to its instance.
		// Shared: other pods run there; Same: the pod.
		{"train-worker-2.train-worker.default.svc", location.Joined{Name: "i-0a1b2c3d4e5f60003", File: "testdata/describe-instances-4.json", Line: 110, Shared: true, Same: []string{"train-worker-2"}}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, location.Join(files, c.host, ids), c.host)
	}

	// Every instance's Name tag names none of them.
	got := location.Join(files, "compute", ids)
	assert.Equal(t, `"compute" names 4 hosts of testdata/describe-instances-4.json (lines 9 and 56), so it joins none`, got.Reason)
	assert.Empty(t, got.Name)
	// A pod not scheduled has no node: said so.
	got = location.Join(files, "train-launcher", ids)
	assert.Equal(t, `testdata/pods-4.json names pod "train-launcher" (line 116), which is not scheduled: it has no spec.nodeName`, got.Reason)
	got = location.Join(files, "trn2-st-trn2-1", ids)
	assert.Equal(t, "not listed, and not named in testdata/scontrol-nodes-4.txt or testdata/pods-4.json or testdata/describe-instances-4.json", got.Reason)
	got = location.Join(nil, "trn1-st-trn1-1", ids)
	assert.Equal(t, "not listed", got.Reason)

	// A capacity reservation's topology: its instances join to it.
	crs := hasOf("cr-0123456789abcdef0")
	assert.Equal(t, location.Joined{Name: "cr-0123456789abcdef0", File: "testdata/describe-instances-4.json", Line: 9, Shared: true, Same: []string{"i-0a1b2c3d4e5f60001"}},
		location.Join([]*location.Instances{describe}, "ip-10-0-1-11", crs))
	// An instance's own location before its reservation's.
	both := hasOf("cr-0123456789abcdef0", "i-0a1b2c3d4e5f60001")
	assert.Equal(t, "i-0a1b2c3d4e5f60001", location.Join([]*location.Instances{describe}, "10.0.1.11", both).Name)
}

func TestJoinBounded(t *testing.T) {
	// A chain of maps, each name joined to the next, lines in reverse:
	// Join follows it to its end, each record once.
	var even, odd strings.Builder
	const n = 2000
	for i := n - 1; i >= 0; i-- {
		w := &even
		if i%2 == 1 {
			w = &odd
		}
		w.WriteString("h" + itoa(i) + " h" + itoa(i+1) + "\n")
	}
	a, err := location.ParseInstances("even", []byte(even.String()))
	require.NoError(t, err)
	b, err := location.ParseInstances("odd", []byte(odd.String()))
	require.NoError(t, err)
	got := location.Join([]*location.Instances{a, b}, "h0", hasOf("h"+itoa(n)))
	assert.Len(t, got.Same, n+1, "every record of the chain and its end are one host's names")
	got.Same = nil
	assert.Equal(t, location.Joined{Name: "h" + itoa(n), File: "odd", Line: 1}, got)
	// A cycle ends.
	in, err := location.ParseInstances("cycle", []byte("a b\nc d\n"))
	require.NoError(t, err)
	in2, err := location.ParseInstances("cycle2", []byte("b c\nd a\n"))
	require.NoError(t, err)
	got = location.Join([]*location.Instances{in, in2}, "a", hasOf("z"))
	assert.Empty(t, got.Name)
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestInstancesMalformed(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"map three fields", "a b c\n", "f:1:5: HOST INSTANCE expected: two names of one host a line, not 3 fields"},
		{"map one field", "a\n", "f:1:2: HOST INSTANCE expected: two names of one host a line, not 1 fields"},
		{"map is a locations file", "trn001 spine0/leaf1\n", `f:1:8: "spine0/leaf1" is a location, not a name: this is a locations file (HOST LOCATION); pass it with --locations`},
		{"map twice", "a b\nc A\n", `f:2:3: "A" again; first on line 1`},
		{"map bad name", "a b\x00\n", `f:1:3: host name "b\x00" has "\x00" at byte 2; only A-Z a-z 0-9 . _ : -`},
		{"map long line", strings.Repeat("a", 70000), "f:1: the line has more than the 64 KiB a line may have"},
		{"scontrol no name", "NodeName= Arch=x\n", "f:1:1: a NodeName= without a name"},
		{"scontrol twice", "NodeName=a\nNodeName=b\n   NodeAddr=1.2.3.4 NodeAddr=1.2.3.5\n", `f:3:21: NodeAddr= twice in the record of node "b"`},
		{"scontrol again", "NodeName=a\nNodeName=A\n", `f:2:1: node "A" again; first on line 1`},
		{"scontrol stray", "NodeName=a\nfoo\n", "f:2:1: a node's record begins with NodeName= (the output of scontrol show nodes), its other lines indented"},
		{"scontrol bad addr", "NodeName=a NodeAddr=b/c\n", `f:1:21: NodeAddr: host name "b/c" has "/" at byte 2; only A-Z a-z 0-9 . _ : -`},
		{"json no kind", `{"Instances": []}`, `f:1:1: a document without "Reservations" (aws ec2 describe-instances) or "items" (kubectl get pods -o json)`},
		{"json mixed", `{"items": []} {"Reservations": []}`, "f:1:15: the output of describe-instances after that of kubectl get pods: one kind a file"},
		{"json no id", `{"Reservations": [{"Instances": [{"PrivateIpAddress": "10.0.0.1"}]}]}`, `f:1:34: an instance without "InstanceId"`},
		{"json id twice", "{\"Reservations\": [{\"Instances\": [{\"InstanceId\": \"i-1\"},\n{\"InstanceId\": \"I-1\"}]}]}", `f:2:16: instance "I-1" is listed again; first on line 1`},
		{"json key twice", `{"Reservations": [{"Instances": [{"InstanceId": "i-1", "InstanceId": "i-2"}]}]}`, `f:1:56: "InstanceId" twice in an instance`},
		{"json not string", `{"Reservations": [{"Instances": [{"InstanceId": 7}]}]}`, `f:1:49: "InstanceId" must be a string, not the number "7"`},
		{"json bad dns", `{"Reservations": [{"Instances": [{"InstanceId": "i-1", "PrivateDnsName": "a b"}]}]}`, `f:1:74: "PrivateDnsName": host name "a b" has " " at byte 2; only A-Z a-z 0-9 . _ : -`},
		{"json reservations not array", `{"Reservations": {}}`, `f:1:18: "Reservations" must be an array, not an object`},
		{"json pod without name", `{"items": [{"metadata": {}}]}`, `f:1:12: a pod without "metadata.name"`},
		{"json nodes", `{"items": [{"metadata": {"name": "n"}, "kind": "Node"}]}`, `f:1:12: a "Node", not a Pod: --instances reads kubectl get pods -o json; the nodes' file is a topology (locate k8s:FILE), which finds a node by its name, instance id and InternalIP`},
		{"json deep", `{"items": [{"x": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `, "metadata": {"name": "p"}}]}`, "f:1:82: JSON nested more than 64 levels deep"},
		{"json none", `[]`, `f: no document in the file: the output of aws ec2 describe-instances ({"Reservations": [...]}) or kubectl get pods -o json ({"items": [...]}) expected`},
		{"json truncated", `{"items": [`, "f:1:12: the file ends inside a JSON value"},
		{"json after", `{"items": []} x`, "f:1:15: not JSON: invalid character 'x' looking for beginning of value"},
	}
	for _, c := range cases {
		_, err := location.ParseInstances("f", []byte(c.text))
		if assert.Error(t, err, c.name) {
			assert.Equal(t, c.want, err.Error(), c.name)
		}
	}
	// The kind a caller asks for.
	_, err := location.ParsePods("f", []byte(`{"Reservations": []}`))
	assert.EqualError(t, err, "f: the output of describe-instances, not of kubectl get pods")
	in, err := location.ParseDescribeInstances("f", []byte(`{"Reservations": [], "NextToken": "x"}`))
	require.NoError(t, err)
	assert.True(t, in.Truncated)
	_, err = location.ReadInstancesFile("testdata/no-such-file")
	assert.EqualError(t, err, "testdata/no-such-file: no such file")
}

func TestHostnames(t *testing.T) {
	names, err := location.Hostnames("trn[001-003,010],login1", 100)
	require.NoError(t, err)
	assert.Equal(t, []string{"trn001", "trn002", "trn003", "trn010", "login1"}, names)
	for _, c := range []struct {
		list string
		col  int
		msg  string
	}{
		{"trn[1-999999999]", 4, `host list "trn[1-999999999]" gives more than 4096 names (refused before it is expanded)`},
		{"a[2-1]", 5, `host list "a[2-1]": the range 2-1 goes down`},
		{"a/b[1-2]", 1, `host list "a/b[1-2]": host name "a/b1" has "/" at byte 2; only A-Z a-z 0-9 . _ : -`},
	} {
		_, err := location.Hostnames(c.list, 4096)
		var e *location.Error
		if assert.ErrorAs(t, err, &e, c.list) {
			assert.Equal(t, c.msg, e.Msg, c.list)
			assert.Equal(t, c.col, e.Col, c.list)
		}
	}
	assert.True(t, location.IsHostlist("a,b"))
	assert.False(t, location.IsHostlist("trn001"))
}

// An instances file of more records than a cluster's is refused at the
// first past the bound, named with its line, before its index grows.
func TestInstancesBounded(t *testing.T) {
	var b strings.Builder
	for i := range location.MaxInstances + 1 {
		b.WriteString("h" + itoa(i) + " i-" + itoa(i) + "\n")
	}
	_, err := location.ParseInstances("big", []byte(b.String()))
	assert.EqualError(t, err, "big:200001: more than 200000 hosts: name only the cluster's (aws ec2 describe-instances --filters, kubectl get pods -l, scontrol show nodes NODELIST)")
}

// A byte-order mark changes nothing an instances file says, and an error
// on its first line names the byte of the file (the mark counts three).
func TestInstancesTakeAByteOrderMark(t *testing.T) {
	for _, name := range []string{"describe-instances-4.json", "pods-4.json", "scontrol-nodes-4.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		plain, err := location.ParseInstances(name, data)
		require.NoError(t, err, name)
		marked, err := location.ParseInstances(name, append([]byte("\xef\xbb\xbf"), data...))
		require.NoError(t, err, name)
		assert.Equal(t, plain, marked, name)
	}
	_, err := location.ParseInstances("f", []byte("\xef\xbb\xbf{\"Reservations\": 7}"))
	require.Error(t, err)
	_, errPlain := location.ParseInstances("f", []byte("{\"Reservations\": 7}"))
	require.Error(t, errPlain)
	assert.NotEqual(t, errPlain.Error(), err.Error(), "the mark's three bytes move the column")
}

// A terminated (or shutting-down) instance, still listed with the Name
// tag of its running replacement, is skipped: the tag joins the live one.
// Two live instances of one tag stay ambiguous.
func TestJoinSkipsTerminatedInstances(t *testing.T) {
	instance := func(id, ip, state string) string {
		addr := `"PrivateIpAddress": "` + ip + `", `
		if ip == "" {
			addr = ""
		}
		return `{"InstanceId": "` + id + `", ` + addr + `"State": {"Code": 16, "Name": "` + state + `"}, "Tags": [{"Key": "Name", "Value": "node-1"}]}`
	}
	doc := func(instances ...string) []byte {
		return []byte(`{"Reservations": [{"Instances": [` + strings.Join(instances, ", ") + `]}]}`)
	}
	ids := hasOf("i-0000000000000000a", "i-0000000000000000b")
	for _, state := range []string{"terminated", "shutting-down"} {
		in, err := location.ParseInstances("d.json", doc(instance("i-0000000000000000a", "", state), instance("i-0000000000000000b", "10.0.0.2", "running")))
		require.NoError(t, err)
		assert.Len(t, in.Records, 1, state)
		assert.Equal(t, location.Joined{Name: "i-0000000000000000b", File: "d.json", Line: 1, Same: []string{"i-0000000000000000b"}}, location.Join([]*location.Instances{in}, "node-1", ids), state)
	}
	in, err := location.ParseInstances("d.json", doc(instance("i-0000000000000000a", "10.0.0.1", "stopped"), instance("i-0000000000000000b", "10.0.0.2", "running")))
	require.NoError(t, err)
	assert.Equal(t, `"node-1" names 2 hosts of d.json (lines 1 and 1), so it joins none`, location.Join([]*location.Instances{in}, "node-1", ids).Reason)
}

// Records that agree are not ambiguous: a hostNetwork pod and kube-proxy
// share the node's address as podIP, both on one node; the address joins
// to that node. Pods on two nodes stay ambiguous.
func TestJoinOfRecordsThatAgree(t *testing.T) {
	pod := func(name, node, ip string) string {
		return `{"metadata": {"name": "` + name + `"}, "spec": {"nodeName": "` + node + `"}, "status": {"hostIP": "` + ip + `", "podIP": "` + ip + `"}}`
	}
	in, err := location.ParseInstances("pods.json", []byte(`{"kind": "List", "items": [`+
		pod("job-worker-0", "node-a", "10.1.0.11")+",\n"+pod("kube-proxy-x1", "node-a", "10.1.0.11")+",\n"+
		pod("job-worker-1", "node-b", "10.1.0.12")+",\n"+pod("other", "node-c", "10.1.0.12")+"]}"))
	require.NoError(t, err)
	files := []*location.Instances{in}
	nodes := hasOf("node-a", "node-b", "node-c")
	// Same: the pods the address names, so a host "job-worker-0" is
	// the machine "10.1.0.11" is (a hostNetwork pod is its node).
	assert.Equal(t, location.Joined{Name: "node-a", File: "pods.json", Line: 1, Shared: true, Same: []string{"job-worker-0", "kube-proxy-x1"}}, location.Join(files, "10.1.0.11", nodes))
	assert.Equal(t, location.Joined{Name: "node-a", File: "pods.json", Line: 1, Shared: true, Same: []string{"job-worker-0"}}, location.Join(files, "job-worker-0", nodes))
	assert.Equal(t, `"10.1.0.12" names 2 hosts of pods.json (lines 3 and 4), so it joins none`, location.Join(files, "10.1.0.12", nodes).Reason)
}

// Names of one instance join it not Shared (two hosts joined to it are
// one machine); through a reservation, Shared.
func TestJoinSaysWhatIsShared(t *testing.T) {
	describe := readInstances(t, "testdata/describe-instances-4.json")
	files := []*location.Instances{describe}
	ids := hasOf("i-0a1b2c3d4e5f60001")
	assert.False(t, location.Join(files, "10.0.1.11", ids).Shared)
	assert.False(t, location.Join(files, "ip-10-0-1-11", ids).Shared)
	assert.True(t, location.Join(files, "10.0.1.12", hasOf("cr-0123456789abcdef0")).Shared)
}

// Two instances files that give one host different instances (a stale
// map beside describe-instances): the host joins neither, whichever file
// comes first, and the reason names both. Files that agree join.
func TestJoinRefusesFilesThatDisagree(t *testing.T) {
	stale, err := location.ParseInstances("stale", []byte("web-1 i-0000000000000000b\n"))
	require.NoError(t, err)
	current, err := location.ParseInstances("current", []byte("web-1 i-0000000000000000a\n"))
	require.NoError(t, err)
	agreeing, err := location.ParseInstances("agreeing", []byte("# HOST INSTANCE\n\nweb-1 i-0000000000000000A\n"))
	require.NoError(t, err)
	has := func(name string) bool { return name == "i-0000000000000000a" || name == "i-0000000000000000b" }
	for _, c := range []struct {
		files []*location.Instances
		want  string
	}{
		{[]*location.Instances{stale, current}, `the instances files disagree: stale gives "i-0000000000000000b" (line 1), current gives "i-0000000000000000a" (line 1), so it joins neither`},
		{[]*location.Instances{current, stale}, `the instances files disagree: current gives "i-0000000000000000a" (line 1), stale gives "i-0000000000000000b" (line 1), so it joins neither`},
	} {
		j := location.Join(c.files, "web-1", has)
		assert.Empty(t, j.Name)
		assert.Equal(t, c.want, j.Reason)
	}
	j := location.Join([]*location.Instances{current, agreeing}, "web-1", has)
	assert.Equal(t, "i-0000000000000000a", j.Name)
	assert.Empty(t, j.Reason)
}
