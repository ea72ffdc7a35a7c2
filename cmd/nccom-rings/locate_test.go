package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/nodeorder"
)

// The fixtures of package location: one cluster of 8 hosts under 2 leaves
// under one spine, as EC2 (i-0a1b2c3d4e5f6000k) and Slurm (trn00k) see it.
const (
	ec2File   = "location/testdata/ec2-8.json"
	slurmFile = "location/testdata/topology-8.conf"
	leafA     = "nn-0f1e2d3c4b5a69780/nn-1a2b3c4d5e6f70811/nn-2aaaaaaaaaaaaaaa1"
)

// noHostHints clears what locate would take the host from otherwise.
func noHostHints(t *testing.T) {
	t.Setenv("SLURMD_NODENAME", "")
	saved := hostname
	hostname = func() (string, error) { return "", errors.New("no host name here") }
	t.Cleanup(func() { hostname = saved })
	savedTag := dmiAssetTag
	dmiAssetTag = filepath.Join(t.TempDir(), "board_asset_tag")
	t.Cleanup(func() { dmiAssetTag = savedTag })
}

func TestLocateSlurmHost(t *testing.T) {
	noHostHints(t)
	code, out, errOut := runTool("locate", "slurm:"+slurmFile, "--host", "trn003")
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "spine0/leaf1\n", out)
	assert.Empty(t, errOut)

	// The host from SLURMD_NODENAME, then from the host name; names
	// compared in lowercase up to the first dot.
	t.Setenv("SLURMD_NODENAME", "TRN004")
	code, out, _ = runTool("locate", "slurm:"+slurmFile)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, "spine0/leaf2\n", out)
	t.Setenv("SLURMD_NODENAME", "")
	hostname = func() (string, error) { return "trn005.ec2.internal", nil }
	code, out, _ = runTool("locate", "slurm:"+slurmFile)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, "spine0/leaf1\n", out)

	code, out, _ = runTool("locate", "--json", "slurm:"+slurmFile, "--host", "Trn002.cluster")
	assert.Equal(t, cli.ExitOK, code)
	var rep located
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, located{Host: "Trn002.cluster", From: "--host", Location: "spine0/leaf2", Source: "slurm", File: slurmFile, Line: 7}, rep)
}

func TestLocateWithoutAHostName(t *testing.T) {
	noHostHints(t)
	code, out, errOut := runTool("locate", "slurm:"+slurmFile)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Empty(t, out)
	assert.Equal(t, "nccom-rings locate: cannot tell this host's name (no host name here) and SLURMD_NODENAME is unset: pass --host NAME\n", errOut)
}

func TestLocateEC2Instance(t *testing.T) {
	noHostHints(t)
	code, out, errOut := runTool("locate", "ec2:"+ec2File, "--instance", "i-0a1b2c3d4e5f60007")
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, leafA+"\n", out)
	// An instance id given with --host is unambiguous; blanks around an
	// id (pasted from a console) are cut.
	code, out, errOut = runTool("locate", "ec2:"+ec2File, "--host", "i-0a1b2c3d4e5f60007")
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, leafA+"\n", out)
	code, out, errOut = runTool("locate", ec2File, "--instance", " i-0a1b2c3d4e5f60007\n")
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, leafA+"\n", out)

	// This instance's id from the DMI asset tag, when there is one.
	code, out, errOut = runTool("locate", "ec2:"+ec2File)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Empty(t, out)
	assert.Equal(t, "nccom-rings locate: "+dmiAssetTag+": no such file: not an EC2 Nitro instance, or /sys is not mounted; pass this instance's id with --instance\n", errOut)
	require.NoError(t, os.WriteFile(dmiAssetTag, []byte("i-0a1b2c3d4e5f60003\n"), 0o444))
	code, out, errOut = runTool("locate", "--json", "ec2:"+ec2File)
	assert.Equal(t, cli.ExitOK, code, errOut)
	var rep located
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, located{Host: "i-0a1b2c3d4e5f60003", From: "the DMI board asset tag", Location: leafA, Source: "ec2", File: ec2File, Line: 28}, rep)
}

func TestLocateNotFound(t *testing.T) {
	noHostHints(t)
	code, out, errOut := runTool("locate", "slurm:"+slurmFile, "--host", "trn009")
	assert.Equal(t, cli.ExitFinding, code)
	assert.Empty(t, out)
	assert.Equal(t, `nccom-rings locate: host "trn009" (from --host) is not in slurm:"`+slurmFile+`"`+"\n", errOut)

	code, out, _ = runTool("locate", "--json", "ec2:"+ec2File, "--instance", "i-0a1b2c3d4e5f60009")
	assert.Equal(t, cli.ExitFinding, code)
	var rep located
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, located{Host: "i-0a1b2c3d4e5f60009", From: "--instance", Source: "ec2", File: ec2File, Reason: "not in the file"}, rep)

	// Under two leaves: in the file, without a location.
	dir := t.TempDir()
	conf := filepath.Join(dir, "topology.conf")
	require.NoError(t, os.WriteFile(conf, []byte("SwitchName=s Switches=a,b\nSwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n2\n"), 0o644))
	code, out, errOut = runTool("locate", "slurm:"+conf, "--host", "n2")
	assert.Equal(t, cli.ExitFinding, code)
	assert.Empty(t, out)
	assert.Equal(t, `nccom-rings locate: host "n2" (from --host) has no location in slurm:"`+conf+`": listed under two leaf switches, "a" (line 2) and "b" (line 3), so it has no single chain of switches`+"\n", errOut)

	// An EC2 file cut at a page: the message says why the instance may
	// be missing.
	page := filepath.Join(dir, "page.json")
	require.NoError(t, os.WriteFile(page, []byte(`{"Instances": [{"InstanceId": "i-1", "NetworkNodes": ["a"]}], "NextToken": "x"}`), 0o644))
	code, _, errOut = runTool("locate", "ec2:"+page, "--instance", "i-2")
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, errOut, `instance "i-2" (from --instance) is not in ec2:"`+page+`": its last page has a NextToken`)
	code, out, _ = runTool("locate", "ec2:"+page, "--instance", "i-1")
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, "a\n", out)
}

// locatedBack runs locate --all on file and reads its output back as the
// locations file it is.
func locatedBack(t *testing.T, file string) []location.Entry {
	t.Helper()
	code, out, errOut := runTool("locate", "--all", file)
	require.Equal(t, cli.ExitOK, code, errOut)
	require.Empty(t, errOut)
	entries, err := location.ReadLocations(strings.NewReader(out))
	require.NoError(t, err, out)
	return entries
}

// Issue 22's "done when": the two sources give locations that give the
// same result.
func TestLocateAllEC2AndSlurmGiveTheSameNodeSequence(t *testing.T) {
	noHostHints(t)
	ec2 := locatedBack(t, "ec2:"+ec2File)
	slurm := locatedBack(t, "slurm:"+slurmFile)
	require.Len(t, ec2, 8)
	require.Len(t, slurm, 8)
	assert.Equal(t, location.Entry{Host: "i-0a1b2c3d4e5f60001", Location: leafA, Line: 3}, ec2[0])
	assert.Equal(t, location.Entry{Host: "trn001", Location: "spine0/leaf1", Line: 2}, slurm[0])

	// The job's nodes in the launcher's order: host k is trn00k and
	// i-0a1b2c3d4e5f6000k; leaves alternate.
	order := []int{1, 2, 3, 4, 5, 6, 7, 8}
	seq := func(entries []location.Entry, name func(int) string) []int32 {
		byKey := map[string]string{}
		for _, e := range entries {
			byKey[location.Key(e.Host)] = e.Location
		}
		locs := make([]nodeorder.Location, len(order))
		for m, k := range order {
			l, err := nodeorder.Parse(byKey[name(k)])
			require.NoError(t, err)
			locs[m] = l
		}
		return nodeorder.ArrangeNodes(locs, nil).Sequence
	}
	ec2Seq := seq(ec2, func(k int) string { return "i-0a1b2c3d4e5f6000" + string(rune('0'+k)) })
	slurmSeq := seq(slurm, func(k int) string { return "trn00" + string(rune('0'+k)) })
	assert.Equal(t, []int32{0, 2, 4, 6, 1, 3, 5, 7}, ec2Seq)
	assert.Equal(t, ec2Seq, slurmSeq)
}

func TestLocateAllFormats(t *testing.T) {
	noHostHints(t)
	code, out, _ := runTool("locate", "--all", "slurm:"+slurmFile)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, `# HOST LOCATION of every host of slurm:"`+slurmFile+`" (nccom-rings locate --all)
trn001 spine0/leaf1
trn003 spine0/leaf1
trn005 spine0/leaf1
trn007 spine0/leaf1
trn002 spine0/leaf2
trn004 spine0/leaf2
trn006 spine0/leaf2
trn008 spine0/leaf2
`, out)
	code, out, _ = runTool("locate", "--all", "ec2:"+ec2File)
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, "\n# HOST is the EC2 instance id: DescribeInstanceTopology gives no host names\ni-0a1b2c3d4e5f60001 "+leafA+"\n")

	// Hosts without a location: on stderr, exit 1, the others printed.
	dir := t.TempDir()
	conf := filepath.Join(dir, "topology.conf")
	require.NoError(t, os.WriteFile(conf, []byte("SwitchName=s Switches=a,b\nSwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n2,n3\n"), 0o644))
	code, out, errOut := runTool("locate", "--all", "slurm:"+conf)
	assert.Equal(t, cli.ExitFinding, code)
	assert.True(t, strings.HasSuffix(out, "\nn1 s/a\nn3 s/b\n"), out)
	assert.Equal(t, `nccom-rings locate: n2 (line 2) has no location: listed under two leaf switches, "a" (line 2) and "b" (line 3), so it has no single chain of switches`+"\n", errOut)

	code, out, _ = runTool("locate", "--all", "--json", "slurm:"+conf)
	assert.Equal(t, cli.ExitFinding, code)
	var rep locatedAll
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, locatedAll{Source: "slurm", File: conf,
		Hosts:      []location.Entry{{Host: "n1", Location: "s/a", Line: 2}, {Host: "n3", Location: "s/b", Line: 3}},
		Unlocated:  []unlocated{{Host: "n2", Line: 2, Reason: `listed under two leaf switches, "a" (line 2) and "b" (line 3), so it has no single chain of switches`}},
		Collisions: []location.Collision{},
	}, rep)

	// No host at all, and a page cut short, are findings too.
	empty := filepath.Join(dir, "empty.json")
	require.NoError(t, os.WriteFile(empty, []byte(`{"Instances": [], "NextToken": "more"}`), 0o644))
	code, out, errOut = runTool("locate", "--all", "ec2:"+empty)
	assert.Equal(t, cli.ExitFinding, code)
	assert.NotContains(t, out, "i-")
	assert.Contains(t, errOut, `places no host`)
	assert.Contains(t, errOut, `the last page has a NextToken`)
}

// Every malformed file is exit 2, naming the file, the line and byte, and
// what was expected.
func TestLocateMalformedFiles(t *testing.T) {
	noHostHints(t)
	dir := t.TempDir()
	cases := []struct {
		source, text, want string
	}{
		{"slurm", "SwitchName=s0 Nodes=a\nSwitchName=s1 Switches=s0 Nodes=b\n", ":2:12: switch \"s1\" has both Switches= and Nodes="},
		{"slurm", "# top\nSwitchName=top Switches=leaf[1-2]\nSwitchName=leaf1 Nodes=a\n", ":2:25: switch \"top\" lists \"leaf2\" in Switches=, and no SwitchName= line defines it"},
		{"slurm", "SwitchName=s0 Nodes=trn[1-\n", ":1:27: Nodes=\"trn[1-\" is not a host list: a number expected in the bracket group"},
		{"slurm", "SwitchName=s0 Nodes=a LinkSpeed=1 Foo=2\n", ":1:35: unknown key \"Foo\"=; a SwitchName line takes Switches=, Nodes= and LinkSpeed="},
		{"slurm", "SwitchName=a Switches=b\nSwitchName=b Switches=a\n", ":1:12: switch \"a\" is below itself"},
		{"slurm", "", ": no SwitchName= or BlockName= line: not a topology.conf (of the topology/tree or topology/block plugin), nor scontrol show topology's output"},
		{"ec2", "{\"Instances\": [\n  {\"InstanceId\": \"i-1\",}\n]}", ":2:24: not JSON: invalid character '}' looking for beginning of object key string"},
		{"ec2", "{\"Instances\": [\n  {\"NetworkNodes\": [\"a\"]}\n]}", ":2:3: an instance without \"InstanceId\""},
		{"ec2", "{\"Reservations\": []}", ":1:1: a response without \"Instances\": not the output of DescribeInstanceTopology"},
		{"ec2", "SwitchName=s0 Nodes=a\n", ":1:1: not JSON: invalid character 'S' looking for beginning of value"},
		{"slurm", "{\"Instances\": []}\n", ":1:1: \"{\" where a KEY=VALUE pair was expected"},
	}
	for i, c := range cases {
		path := filepath.Join(dir, "file"+string(rune('a'+i)))
		require.NoError(t, os.WriteFile(path, []byte(c.text), 0o644))
		code, out, errOut := runTool("locate", c.source+":"+path, "--host", "a")
		if c.source == "ec2" {
			code, out, errOut = runTool("locate", c.source+":"+path, "--instance", "i-1")
		}
		assert.Equal(t, cli.ExitUnusable, code, c.text)
		assert.Empty(t, out)
		assert.True(t, strings.HasPrefix(errOut, "nccom-rings locate: "+path+c.want), "got  %s\nwant %s", errOut, c.want)
	}
}

func TestLocateLimits(t *testing.T) {
	noHostHints(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(65<<20))
	require.NoError(t, f.Close())
	code, _, errOut := runTool("locate", "--all", "ec2:"+big)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings locate: "+big+": has 68157440 bytes, more than the 64 MiB a file may have\n", errOut)

	long := filepath.Join(dir, "long.conf")
	require.NoError(t, os.WriteFile(long, []byte("SwitchName=s0 Nodes=a\n# "+strings.Repeat("x", 65<<10)+"\n"), 0o644))
	code, _, errOut = runTool("locate", "--all", "slurm:"+long)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings locate: "+long+":2: the line has 66562 bytes, more than the 64 KiB a line may have\n", errOut)

	bomb := filepath.Join(dir, "bomb.conf")
	require.NoError(t, os.WriteFile(bomb, []byte("SwitchName=s0 Nodes=n[0-99999]x[0-99999]\n"), 0o644))
	code, _, errOut = runTool("locate", "--all", "slurm:"+bomb)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings locate: "+bomb+`:1:21: Nodes="n[0-99999]x[0-99999]" gives more names than the file may have (1000000, hostlists expanded)`+"\n", errOut)

	code, _, errOut = runTool("locate", "--all", "slurm:"+filepath.Join(dir, "none"))
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings locate: "+filepath.Join(dir, "none")+": no such file\n", errOut)
	code, _, errOut = runTool("locate", "--all", "slurm:"+dir)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings locate: "+dir+": is a directory, not a regular file\n", errOut)
}

func TestLocateStandardInput(t *testing.T) {
	noHostHints(t)
	saved := os.Stdin
	t.Cleanup(func() { os.Stdin = saved })
	f, err := os.Open(slurmFile)
	require.NoError(t, err)
	defer f.Close()
	os.Stdin = f
	code, out, errOut := runTool("locate", "slurm:-", "--host", "trn008")
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "spine0/leaf2\n", out)
}

func TestLocateUsage(t *testing.T) {
	noHostHints(t)
	code, out, _ := runTool("locate", "--help")
	assert.Equal(t, cli.ExitOK, code)
	assert.True(t, strings.HasPrefix(out, "Usage: nccom-rings locate [--host NAME | --instance ID] [--instances FILE]...\n"), out)
	assert.Contains(t, out, "Exit codes:\n  0  the location was printed")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"locate"}, "want one [SOURCE:]FILE, got 0 operands"},
		{[]string{"locate", "a", "b"}, "want one [SOURCE:]FILE, got 2 operands"},
		{[]string{"locate", "slurm:"}, `"slurm:": want [SOURCE:]FILE, a file after the prefix`},
		{[]string{"locate", "--from", "gcp", "x"}, `--from "gcp": want ec2, ec2-reservation, k8s, slurm, slurm-env or auto`},
		{[]string{"locate", "--from", "ec2", "slurm:x"}, "--from ec2 and the prefix slurm: name the source once"},
		{[]string{"locate", "--from", "slurm-env", "x"}, "--from slurm-env reads no file (SLURM_TOPOLOGY_ADDR), got 1 operands"},
		{[]string{"locate", "slurm-env:x"}, "slurm-env reads no file: use --from slurm-env alone"},
		{[]string{"locate", "--labels", "a", "slurm:x"}, "--labels does not apply to the slurm source: it reads k8s nodes' labels"},
		{[]string{"locate", "--accelerator", "ec2:x"}, "--accelerator does not apply to the ec2 source: it reads k8s nodes' labels"},
		{[]string{"locate", "--topology", "a", "k8s:x"}, "--topology does not apply to the k8s source: it names a topology of a Slurm topology.yaml"},
		{[]string{"locate", "--topology", "a", "--from", "slurm-env"}, "--topology does not apply to the slurm-env source: it names a topology of a Slurm topology.yaml"},
		// The same once the source is told by content.
		{[]string{"locate", "--labels", "a", "--all", "testdata/cluster16/topology-tree.conf"}, "--labels does not apply to the slurm source: it reads k8s nodes' labels"},
		{[]string{"locate", "--accelerator", "--all", "testdata/cluster16/ec2-topology.json"}, "--accelerator does not apply to the ec2 source: it reads k8s nodes' labels"},
		{[]string{"locate", "--topology", "t", "--all", "testdata/cluster16/eks-nodes.json"}, "--topology does not apply to the k8s source: it names a topology of a Slurm topology.yaml"},
		{[]string{"locate", "--instance", "i-1", "testdata/cluster16/topology-tree.conf"}, "--instance does not apply to the slurm source: it names hosts, not instances: use --host NAME"},
		{[]string{"locate", "--all", "--host", "a", "slurm:x"}, "--all lists every host of the file; --host and --instance name one"},
		{[]string{"locate", "--host", "a", "--instance", "i-1", "slurm:x"}, "--host and --instance exclude each other"},
		{[]string{"locate", "--host", "a", "ec2:x"}, "an EC2 instance-topology file names instances, not hosts: use --instance ID (or --instances FILE to join a host name to its instance)"},
		{[]string{"locate", "--instance", "i-1", "slurm:x"}, "--instance does not apply to the slurm source: it names hosts, not instances: use --host NAME"},
		{[]string{"locate", "--host=", "slurm:x"}, "--host and --instance need a name"},
		{[]string{"locate", "--bogus", "slurm:x"}, "flag provided but not defined: -bogus"},
	} {
		code, out, errOut := runTool(c.args...)
		assert.Equal(t, cli.ExitUnusable, code, c.args)
		assert.Empty(t, out)
		assert.True(t, strings.HasPrefix(errOut, "nccom-rings locate: "+c.want+"\n"), "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, "Usage: nccom-rings locate")
	}
	code, out, _ = runTool("--help")
	assert.Equal(t, cli.ExitOK, code)
	assert.Regexp(t, `(?m)^  locate +a host's NCCOM_RING_LOCATION`, out) // the column is as wide as the longest command name
}

// D28: two leaf names whose 32-bit FNV-1a hashes are equal (found by a
// search over leafN names; checked here against nodeorder.Hash) are one
// leaf to the library: locate --all says so on stderr, naming both, the
// level and the hash, and in --json; its locations file is unchanged.
func TestLocateAllSaysWhenTwoNamesShareAHash(t *testing.T) {
	require.Equal(t, uint32(0xf738b38c), nodeorder.Hash("leaf13298"))
	require.Equal(t, uint32(0xf738b38c), nodeorder.Hash("leaf302080"))
	conf := filepath.Join(t.TempDir(), "topology.conf")
	require.NoError(t, os.WriteFile(conf, []byte("SwitchName=s Switches=leaf13298,leaf302080\nSwitchName=leaf13298 Nodes=n1\nSwitchName=leaf302080 Nodes=n2\n"), 0o644))
	code, out, errOut := runTool("locate", "--all", "slurm:"+conf)
	assert.Equal(t, cli.ExitOK, code)
	assert.True(t, strings.HasSuffix(out, "\nn1 s/leaf13298\nn2 s/leaf302080\n"), out)
	assert.Equal(t, `nccom-rings locate: level 2: the names "leaf13298" and "leaf302080" share the hash 0xf738b38c, so the library takes them for one (D28: names travel as their 32-bit FNV-1a hashes); rename one`+"\n", errOut)

	code, out, _ = runTool("locate", "--all", "--json", "slurm:"+conf)
	assert.Equal(t, cli.ExitOK, code)
	var rep locatedAll
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, []location.Collision{{Level: 2, Hash: 0xf738b38c, Names: [2]string{"leaf13298", "leaf302080"}}}, rep.Collisions)
}

// Two leaf names whose 32-bit FNV-1a hashes are equal (the first repeat
// among leaf0, leaf1, ...; checked against nodeorder.Hash), and the line
// a tool prints about them (D28).
const (
	leafX, leafY  = "leaf13298", "leaf302080"
	collisionHash = uint32(0xf738b38c)
	collisionLine = `level 2: the names "leaf13298" and "leaf302080" share the hash 0xf738b38c, so the library takes them for one (D28: names travel as their 32-bit FNV-1a hashes); rename one`
)

func TestTheCollidingNamesCollide(t *testing.T) {
	assert.Equal(t, collisionHash, nodeorder.Hash(leafX))
	assert.Equal(t, collisionHash, nodeorder.Hash(leafY))
}

var wantCollision = []location.Collision{{Level: 2, Hash: collisionHash, Names: [2]string{leafX, leafY}}}

// score reads the names from the dumps: two nodes under the two leaves
// are one group to the library (its INFO line: 1 group at level 2), and
// score says why.
func TestScoreSaysWhenTwoNamesShareAHash(t *testing.T) {
	j := placementJob{size: []int{2, 2}, first: []int{0, 2}, head: []int{0, 2},
		loc: []string{"s/" + leafX, "s/" + leafX, "s/" + leafY, "s/" + leafY}}
	j.env = j.loc
	files, res := j.run(t)
	assert.Contains(t, res.Order.Summary, "level 2: 0 crossings of 1 groups", "the library sees one leaf")
	dir := t.TempDir()
	for _, f := range files {
		_, err := writeDump(dir, f)
		require.NoError(t, err)
	}
	code, out, errOut := runTool("score", dir)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "\n  "+collisionLine+"\n")

	code, out, _ = runTool("score", "--json", dir)
	assert.Equal(t, cli.ExitOK, code)
	var rep scoreReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, wantCollision, rep.Collisions)

	// None: an empty list, not null.
	j.loc = []string{"s/a", "s/a", "s/b", "s/b"}
	j.env = j.loc
	files, _ = j.run(t)
	dir = t.TempDir()
	for _, f := range files {
		_, err := writeDump(dir, f)
		require.NoError(t, err)
	}
	_, out, _ = runTool("score", "--json", dir)
	assert.Contains(t, out, `"collisions": []`)
}

// plan reads the names from the locations file, for the hosts it plans.
func TestPlanSaysWhenTwoNamesShareAHash(t *testing.T) {
	dir := t.TempDir()
	locs, hosts := filepath.Join(dir, "locations"), filepath.Join(dir, "hosts")
	require.NoError(t, os.WriteFile(locs, []byte("h0 s/"+leafX+"\nh1 s/"+leafY+"\nh2 s/other\n"), 0o644))
	require.NoError(t, os.WriteFile(hosts, []byte("h0\nh1\nh2\n"), 0o644))
	code, out, errOut := runTool("plan", "--locations", locs, "--hosts", hosts, "--ranks-per-node", "2")
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "\n  "+collisionLine+"\n")

	code, out, _ = runTool("plan", "--locations", locs, "--hosts", hosts, "--ranks-per-node", "2", "--json")
	assert.Equal(t, cli.ExitOK, code)
	var rep planReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, wantCollision, rep.Collisions)
}

// locate on the sources of issue 36, as the command: what each prints,
// where it takes the host from, and its exit codes.

func TestLocateCapacityReservations(t *testing.T) {
	noHostHints(t)
	const file = "location/testdata/ec2-reservation.json"
	code, out, errOut := runTool("locate", "--all", "ec2-reservation:"+file)
	assert.Equal(t, cli.ExitFinding, code) // the expired one has no location
	assert.Equal(t, "# HOST LOCATION of every host of ec2-reservation:\""+file+"\" (nccom-rings locate --all)\n"+
		"# HOST is the Capacity Reservation id: no instance is named before launch\n"+
		"cr-0a1b2c3d4e5f60001 nn-0f1e2d3c4b5a69780/nn-1a2b3c4d5e6f70811/nn-2aaaaaaaaaaaaaaa1\n"+
		"cr-0a1b2c3d4e5f60002 nn-0f1e2d3c4b5a69780/nn-1a2b3c4d5e6f70811/nn-2aaaaaaaaaaaaaaa2\n", out)
	assert.Contains(t, errOut, "cr-0a1b2c3d4e5f60003 (line 30) has no location: EC2 gave no NetworkNodes for it")

	// By its Capacity Block, the source told by content.
	code, out, errOut = runTool("locate", "--host", "cb-0f9e8d7c6b5a40002", file)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "nn-0f1e2d3c4b5a69780/nn-1a2b3c4d5e6f70811/nn-2aaaaaaaaaaaaaaa2\n", out)
	code, _, errOut = runTool("locate", file)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings locate: a Capacity Reservation topology names reservations: pass --host ID (cr-... or cb-...), or --all\n", errOut)

	// A Capacity Block two reservations of different locations share:
	// no location, naming both, rather than the first one's.
	shared := filepath.Join(t.TempDir(), "cr.json")
	require.NoError(t, os.WriteFile(shared, []byte(`{"CapacityReservations": [`+
		`{"CapacityReservationId": "cr-1", "CapacityBlockId": "cb-1", "State": "active", "NetworkNodes": ["nn-a", "nn-b"]},`+
		`{"CapacityReservationId": "cr-2", "CapacityBlockId": "cb-1", "State": "active", "NetworkNodes": ["nn-a", "nn-c"]}]}`), 0o644))
	code, out, errOut = runTool("locate", "--host", "cb-1", shared)
	assert.Equal(t, cli.ExitFinding, code, out)
	assert.Contains(t, errOut, `"cr-1" (line 1) at nn-a/nn-b and "cr-2" (line 1) at nn-a/nn-c`)
}

func TestLocateKubernetesNode(t *testing.T) {
	noHostHints(t)
	file := filepath.Join(cluster16, "eks-nodes.json")
	// In a pod, this instance's id from the DMI board asset tag finds
	// its node by spec.providerID.
	require.NoError(t, os.WriteFile(dmiAssetTag, []byte("i-0c16a1b2c3d4e5f01\n"), 0o644))
	code, out, errOut := runTool("locate", "--json", file)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, `"location": "nn-4f1c0a9b3d2e51000/nn-5a2b3c4d5e6f72001/nn-6c3d4e5f607183001"`)
	assert.Contains(t, out, `"source": "k8s"`)
	assert.Contains(t, out, `"from": "the DMI board asset tag"`)
	code, out, _ = runTool("locate", "--host", "ip-10-1-3-26", "k8s:"+file)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, "nn-4f1c0a9b3d2e51000/nn-5a2b3c4d5e6f72002/nn-6c3d4e5f607183004\n", out)
	// By its InternalIP (status.addresses), as by its name.
	code, ipOut, errOut := runTool("locate", "--host", "10.1.3.26", "k8s:"+file)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, out, ipOut)

	// --labels, outermost first; the accelerator only when asked.
	code, out, _ = runTool("locate", "--all", "--labels", "network.topology.nvidia.com/spine,network.topology.nvidia.com/accelerator", filepath.Join(cluster16, "topograph-nodes.json"))
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, "\nip-10-1-0-11.us-west-2.compute.internal spine1/cb-0c160\n")
	code, out, _ = runTool("locate", "--all", "--accelerator", filepath.Join(cluster16, "topograph-nodes.json"))
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, "\nip-10-1-3-26.us-west-2.compute.internal core/spine2/leaf4/cb-0c167\n")
	code, _, errOut = runTool("locate", "--all", "--labels", "a,,b", file)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.True(t, strings.HasPrefix(errOut, `nccom-rings locate: --labels "a,,b": want label keys separated by commas, outermost first`), errOut)

	// A key no node has (a typo) is an error naming it, not a level
	// dropped from every location; blanks after a comma are cut.
	topograph := filepath.Join(cluster16, "topograph-nodes.json")
	code, out, errOut = runTool("locate", "--all", "--labels", "network.topology.nvidia.com/spine,network.topology.nvidia.com/acelerator", topograph)
	assert.Equal(t, cli.ExitUnusable, code, out)
	assert.Contains(t, errOut, `no node has the label "network.topology.nvidia.com/acelerator" of --labels`)
	code, out, errOut = runTool("locate", "--all", "--labels", "network.topology.nvidia.com/spine, network.topology.nvidia.com/accelerator", topograph)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "\nip-10-1-0-11.us-west-2.compute.internal spine1/cb-0c160\n")
	code, _, errOut = runTool("locate", "--all", "--labels", "a b", topograph)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, `--labels "a b": want label keys`)
	// --accelerator when no node has the accelerator label.
	code, _, errOut = runTool("locate", "--all", "--accelerator", filepath.Join("location", "testdata", "k8s-no-accelerator.json"))
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "--accelerator: no node has the label network.topology.nvidia.com/accelerator")
}

func TestLocateSlurmEnv(t *testing.T) {
	noHostHints(t)
	t.Setenv("SLURM_TOPOLOGY_ADDR", "")
	t.Setenv("SLURM_TOPOLOGY_ADDR_PATTERN", "")
	code, _, errOut := runTool("locate", "--from", "slurm-env")
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings locate: SLURM_TOPOLOGY_ADDR: is not set, nor SLURM_TOPOLOGY_ADDR_PATTERN: not in a Slurm task (srun, sbatch), or its Slurm sets neither\n", errOut)

	t.Setenv("SLURM_TOPOLOGY_ADDR", "trn1-st-trn1-3")
	t.Setenv("SLURM_TOPOLOGY_ADDR_PATTERN", "node")
	code, out, errOut := runTool("locate", "--from", "slurm-env")
	assert.Equal(t, cli.ExitFinding, code)
	assert.Empty(t, out)
	assert.Equal(t, `nccom-rings locate: host "trn1-st-trn1-3" (from SLURM_TOPOLOGY_ADDR) has no location in slurm-env:"SLURM_TOPOLOGY_ADDR": SLURM_TOPOLOGY_ADDR_PATTERN is "node", the node alone: this job's topology plugin places it under no switch`+"\n", errOut)

	t.Setenv("SLURM_TOPOLOGY_ADDR", "core.spine1.leaf1.trn1-st-trn1-3")
	t.Setenv("SLURM_TOPOLOGY_ADDR_PATTERN", "switch.switch.switch.node")
	code, out, _ = runTool("locate", "--from", "slurm-env", "--json")
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, `"location": "core/spine1/leaf1"`)
}

func TestLocateSlurmYAMLTopologies(t *testing.T) {
	noHostHints(t)
	const file = "location/testdata/topology.yaml"
	code, out, _ := runTool("locate", "--host", "trn03", file)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, "root/s2\n", out)
	code, out, _ = runTool("locate", "--host", "trn03", "--topology", "blocks", "slurm:"+file)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, "b2\n", out)
	code, out, errOut := runTool("locate", "--all", "--topology", "whole", file)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t, "# HOST LOCATION of every host of slurm:\""+file+"\" (nccom-rings locate --all)\n", out)
	assert.Equal(t, "nccom-rings locate: slurm:\""+file+"\" places no host: topology \"whole\" is flat (topology/flat): every node is as near as any other, so no host has a location\n", errOut)
	code, _, errOut = runTool("locate", "--all", "--topology", "rings", file)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.True(t, strings.HasPrefix(errOut, "nccom-rings locate: "+file+":30:3: topology \"rings\" is a ring (topology/ring)"), errOut)
}

// A prefix no source has is a file name only when that file is there:
// otherwise the operand is refused naming the prefix, not "no such file".
func TestLocateUnknownSourcePrefix(t *testing.T) {
	for _, prefix := range []string{"foo", "EC2"} {
		code, out, errOut := runTool("locate", "--all", prefix+":testdata/cluster16/ec2-topology.json")
		assert.Equal(t, cli.ExitUnusable, code)
		assert.Empty(t, out)
		assert.True(t, strings.HasPrefix(errOut, `nccom-rings locate: "`+prefix+`:testdata/cluster16/ec2-topology.json": no source "`+prefix+`" (want ec2, ec2-reservation, k8s or slurm before ':', lower case), and no file of that name`+"\n"), errOut)
	}
	// A file whose name has a colon is read.
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/cluster16/ec2-topology.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x:topology.json"), data, 0o644))
	t.Chdir(dir)
	code, out, errOut := runTool("locate", "--all", "x:topology.json")
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "# HOST LOCATION of every host of ec2:\"x:topology.json\"")
}
