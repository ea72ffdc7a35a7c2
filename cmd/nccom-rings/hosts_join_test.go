package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cli"
)

// Issue 36's cluster of 16 hosts (testdata/cluster16, written for the
// issue in the shape of the real files):
//
//   - hosts.txt: ParallelCluster's static node names trn1-st-trn1-1..16,
//     slots=32 each (trn1.32xlarge has 32 NeuronCores), in the order
//     scontrol show hostnames gives them;
//   - hosts-sorted.txt: the same hosts sorted as strings (trn1-st-trn1-10
//     before trn1-st-trn1-2), as a launcher that sorts host names lists
//     them: the order that scatters the leaves;
//   - ec2-topology.json: aws ec2 describe-instance-topology's JSON for
//     their 16 instances, one layer-1 node, 2 spines, 4 leaves; hosts
//     1-4, 5-8, 9-12 and 13-16 each on a leaf, leaves 1-2 under one spine
//     and 3-4 under the other (the groups every other source of the
//     cluster gives), listed in another order than the hosts';
//   - describe-instances.json: aws ec2 describe-instances' JSON for them,
//     two reservations of 8, each instance's Name tag its host's name
//     (where instances share one Name tag, scontrol show nodes joins:
//     see the location package's tests).
const (
	c16Hosts     = "testdata/cluster16/hosts.txt"
	c16Sorted    = "testdata/cluster16/hosts-sorted.txt"
	c16Topology  = "testdata/cluster16/ec2-topology.json"
	c16Instances = "testdata/cluster16/describe-instances.json"
)

// c16Locations writes locate --all's locations of the EC2 topology (by
// instance id) to a file and returns its path.
func c16Locations(t *testing.T) string {
	t.Helper()
	code, out, errOut := runTool("locate", "--all", "ec2:"+c16Topology)
	require.Equal(t, cli.ExitOK, code, errOut)
	path := filepath.Join(t.TempDir(), "locations")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	return path
}

// planJSON runs plan with args and --json, expecting want.
func planJSON(t *testing.T, want int, args ...string) planReport {
	t.Helper()
	code, out, errOut := runTool(append([]string{"plan", "--json"}, args...)...)
	require.Equal(t, want, code, errOut)
	var rep planReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	return rep
}

// atFewest reports whether every channel of p crosses every level the
// fewest times a ring can.
func atFewest(p planned) bool {
	for _, c := range p.Score.Channels {
		for _, l := range c.Levels {
			if l.Crossings != l.Minimum {
				return false
			}
		}
	}
	return true
}

// Done when 2: a hostfile of host names, the EC2 topology and the
// describe-instances JSON: 16 of 16 located, and the emitted hostfile,
// planned in rank order, at the fewest crossings; without the instances
// file, 0 of 16 and the file that would join them.
func TestPlanJoinsHostNamesToInstances(t *testing.T) {
	locs := c16Locations(t)

	code, out, errOut := runTool("plan", "--locations", locs, "--hosts", c16Hosts)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Empty(t, out, "nothing planned")
	assert.Equal(t, `nccom-rings plan: 0 of 16 hosts located, so nothing planned; the first without a location, "trn1-st-trn1-1" (line 3 of "testdata/cluster16/hosts.txt"): not in "`+locs+`"`+"\n"+
		`nccom-rings plan: "`+locs+`" names EC2 instances; join the hosts to them: aws ec2 describe-instances --output json > instances.json and add --instances instances.json (or --allow-unlocated, to plan them without a location)`+"\n", errOut)

	emitted := filepath.Join(t.TempDir(), "hosts")
	rep := planJSON(t, cli.ExitOK, "--locations", locs, "--hosts", c16Sorted, "--instances", c16Instances, "--emit-hostfile", emitted)
	assert.Equal(t, 16, rep.Located)
	assert.Empty(t, rep.Unlocated)
	assert.Equal(t, []string{c16Instances}, rep.Instances)
	require.Len(t, rep.Plans, 2)
	assert.False(t, atFewest(rep.Plans[0]), "the hostfile's order crosses leaves more than it must")
	assert.True(t, atFewest(rep.Plans[1]))
	data, err := os.ReadFile(emitted)
	require.NoError(t, err)
	assert.Contains(t, string(data), "\ntrn1-st-trn1-1 slots=32\ntrn1-st-trn1-2 slots=32\ntrn1-st-trn1-3 slots=32\ntrn1-st-trn1-4 slots=32\ntrn1-st-trn1-5 slots=32\n", "a leaf's hosts together")

	again := planJSON(t, cli.ExitOK, "--locations", locs, "--hosts", emitted, "--instances", c16Instances, "--order", "rank")
	require.Len(t, again.Plans, 1)
	assert.Equal(t, 16, again.Located)
	assert.True(t, atFewest(again.Plans[0]), "the emitted hostfile in rank order: the fewest crossings at every level")
	assert.Equal(t, rep.Plans[1].Score.MaxExcess, again.Plans[0].Score.MaxExcess)

	// The side-by-side table says where the locations came from.
	code, out, _ = runTool("plan", "--locations", locs, "--hosts", c16Hosts, "--instances", c16Instances, "--order", "rank")
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, out, "\n  16 of 16 hosts located in \""+locs+"\", joined through --instances \""+c16Instances+"\"\n")
}

// Some hosts joined, some not: the first without a location and why;
// --allow-unlocated plans them as the library would run them.
func TestPlanRefusesToGuess(t *testing.T) {
	locs := c16Locations(t)
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("trn1-st-trn1-[1,5,9] slots=32\ntrn1-st-trn1-99 slots=32\n"), 0o644))
	code, _, errOut := runTool("plan", "--locations", locs, "--hosts", hosts, "--instances", c16Instances)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t, `nccom-rings plan: 3 of 4 hosts located, so nothing planned; the first without a location, "trn1-st-trn1-99" (line 2 of "`+hosts+`"): not listed, and not named in testdata/cluster16/describe-instances.json`+"\n"+
		`nccom-rings plan: add the --instances FILE that names them, or locations that list them (or --allow-unlocated, to plan them without a location)`+"\n", errOut)

	rep := planJSON(t, cli.ExitOK, "--locations", locs, "--hosts", hosts, "--instances", c16Instances, "--allow-unlocated", "--order", "network")
	assert.Equal(t, 3, rep.Located)
	assert.Equal(t, []string{"trn1-st-trn1-99"}, rep.Unlocated)
	assert.Equal(t, []int{0, 1, 2, 3}, rep.Plans[0].Sequence[:4], "the network order: leaves 1 and 2 under one spine, 3 under the other, then the host without a location")

	// A map that joins the host to nothing the locations list.
	joins := filepath.Join(dir, "map")
	require.NoError(t, os.WriteFile(joins, []byte("trn1-st-trn1-99 i-0ffffffffffffffff\n"), 0o644))
	code, _, errOut = runTool("plan", "--locations", locs, "--hosts", hosts, "--instances", c16Instances, "--instances", joins)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, errOut, `"trn1-st-trn1-99" (line 2 of "`+hosts+`"): `+joins+` joins it to "trn1-st-trn1-99", "i-0ffffffffffffffff" (line 1), which the locations do not list`+"\n")

	// An instances file that is not one: unusable, named with its line.
	require.NoError(t, os.WriteFile(joins, []byte("trn1-st-trn1-99 spine/leaf\n"), 0o644))
	code, _, errOut = runTool("plan", "--locations", locs, "--hosts", hosts, "--instances", joins)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings plan: --instances: "+joins+`:1:17: "spine/leaf" is a location, not a name: this is a locations file (HOST LOCATION); pass it with --locations`+"\n", errOut)
}

// Done when 3: a Slurm host list of the 16 hosts plans as the hostfile
// that lists them, whether --hosts is the list, a hostfile's line holds
// it, or SLURM_JOB_NODELIST does.
func TestPlanOfASlurmHostList(t *testing.T) {
	locs := c16Locations(t)
	common := []string{"--locations", locs, "--instances", c16Instances}
	want := planJSON(t, cli.ExitOK, append([]string{"--hosts", c16Hosts}, common...)...)

	listed := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(listed, []byte("# one line, 16 hosts\ntrn1-st-trn1-[1-16] slots=32\n"), 0o644))
	t.Setenv("SLURM_JOB_NODELIST", "trn1-st-trn1-[1-2,3-16]")
	t.Setenv("SLURM_NTASKS_PER_NODE", "32")
	for _, args := range [][]string{
		{"--hosts", "trn1-st-trn1-[1-16]", "--ranks-per-node", "32"},
		{"--hosts", listed},
		{"--hosts-from-env"},
	} {
		got := planJSON(t, cli.ExitOK, append(args, common...)...)
		assert.Equal(t, want.NRanks, got.NRanks, args)
		assert.Equal(t, want.Located, got.Located, args)
		assert.Equal(t, want.Plans, got.Plans, args)
		assert.Equal(t, want.Collisions, got.Collisions, args)
	}

	// The list is sized before it is expanded, and named with the byte.
	code, _, errOut := runTool("plan", "--locations", locs, "--hosts", "trn[1-999999999]", "--ranks-per-node", "32")
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, `nccom-rings plan: --hosts: host list "trn[1-999999999]" gives more than 4096 names (refused before it is expanded)`+"\n", errOut)
	require.NoError(t, os.WriteFile(listed, []byte("a\n  trn[3-1] slots=2\n"), 0o644))
	code, _, errOut = runTool("plan", "--locations", locs, "--hosts", listed)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings plan: "+listed+`:2:9: host list "trn[3-1]": the range 3-1 goes down`+"\n", errOut)
	t.Setenv("SLURM_JOB_NODELIST", "")
	code, _, errOut = runTool("plan", "--locations", locs, "--hosts-from-env")
	assert.Equal(t, cli.ExitUnusable, code)
	assert.True(t, strings.HasPrefix(errOut, "nccom-rings plan: --hosts-from-env: SLURM_JOB_NODELIST is not set"), errOut)
	code, _, _ = runTool("plan", "--locations", locs, "--hosts-from-env", "--hosts", c16Hosts)
	assert.Equal(t, cli.ExitUnusable, code)
}

// locate --instances: a host name located in the EC2 topology through
// describe-instances, as a job script on the host would.
func TestLocateJoinsAHost(t *testing.T) {
	code, out, errOut := runTool("locate", "--host", "trn1-st-trn1-7", "--instances", c16Instances, "ec2:"+c16Topology)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "nn-4a1b2c3d4e5f60718/nn-5b2c3d4e5f6071829/nn-6e5f60718293a4b52\n", out, "leaf 2, under the first spine")
	// By address, through a map to the address's instance's DNS name.
	joins := filepath.Join(t.TempDir(), "map")
	require.NoError(t, os.WriteFile(joins, []byte("node-a ip-10-1-0-27\n"), 0o644))
	code, out, _ = runTool("locate", "--host", "node-a", "--instances", joins, "--instances", c16Instances, "ec2:"+c16Topology)
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, "nn-4a1b2c3d4e5f60718/nn-5b2c3d4e5f6071829/nn-6e5f60718293a4b52\n", out, "10.1.0.27 is trn1-st-trn1-7's")

	code, _, errOut = runTool("locate", "--host", "trn1-st-trn1-77", "--instances", c16Instances, "ec2:"+c16Topology)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, errOut, `"trn1-st-trn1-77" (from --host) is not in ec2:`)
	code, _, errOut = runTool("locate", "--all", "--instances", c16Instances, "ec2:"+c16Topology)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Contains(t, errOut, "--all lists the file's own names; --instances joins one host")
	code, _, errOut = runTool("locate", "--host", "x", "--instances", "testdata/cluster16/no-such-file", "ec2:"+c16Topology)
	assert.Equal(t, cli.ExitUnusable, code)
	assert.Equal(t, "nccom-rings locate: --instances: testdata/cluster16/no-such-file: no such file\n", errOut)
}

// score and report of dumps without locations say how many nodes are
// located, the first without, and the line that gives them one; plan
// --emit-locations writes it by host name, joined once.
func TestScoreAndReportSayWhatWouldLocateTheDumps(t *testing.T) {
	locs := c16Locations(t)
	dir := t.TempDir()
	dumps := filepath.Join(dir, "dumps")
	code, _, errOut := runTool("plan", "--locations", locs, "--hosts", c16Hosts, "--allow-unlocated", "--order", "rank", "--dump", dumps)
	require.Equal(t, cli.ExitOK, code, errOut)

	code, out, errOut := runTool("score", dumps)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "locations from the dumps: 0 of 16 nodes located, 0 levels\n"+
		`  without a location: nodes 0-15 (host "trn1-st-trn1-1" first): their ranks ran without NCCOM_RING_LOCATION; give --locations FILE (nccom-rings locate --all; by host name: nccom-rings plan --hosts HOSTFILE --locations FILE --instances FILE --emit-locations NEWFILE)`+"\n")
	code, _, errOut = runTool("score", dumps, "--locations", locs)
	assert.Equal(t, cli.ExitOK, code, errOut)
	code, out, _ = runTool("score", dumps, "--locations", locs)
	assert.Contains(t, out, `  without a location: nodes 0-15 (host "trn1-st-trn1-1" first): not in "`+locs+`"; by the dumps' host names: nccom-rings plan`)
	page := filepath.Join(dir, "page.html")
	code, _, errOut = runTool("report", dumps, "-o", page)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, `nccom-rings report: 0 of 16 nodes located (host "trn1-st-trn1-1" first without): their ranks ran without NCCOM_RING_LOCATION; give --locations FILE (nccom-rings locate --all; by host name: nccom-rings plan --hosts HOSTFILE --locations FILE --instances FILE --emit-locations NEWFILE)`+"\n", errOut)

	byName := filepath.Join(dir, "locations-by-host")
	code, out, errOut = runTool("plan", "--locations", locs, "--hosts", c16Hosts, "--instances", c16Instances, "--order", "rank", "--emit-locations", byName)
	require.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "  locations by host name written to \""+byName+"\": score and report take it as --locations\n")
	data, err := os.ReadFile(byName)
	require.NoError(t, err)
	assert.Equal(t, 17, strings.Count(string(data), "\n"), "a comment and 16 hosts")
	assert.Contains(t, string(data), "\ntrn1-st-trn1-7 nn-4a1b2c3d4e5f60718/nn-5b2c3d4e5f6071829/nn-6e5f60718293a4b52\n")
	code, out, errOut = runTool("score", dumps, "--locations", byName)
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Contains(t, out, "16 of 16 nodes located, 3 levels\n")
	assert.NotContains(t, out, "without a location")
	code, _, errOut = runTool("report", dumps, "--locations", byName, "-o", page)
	assert.Equal(t, cli.ExitOK, code)
	assert.Empty(t, errOut)
}

// A capacity reservation's topology names reservations: a host reaches
// its reservation's location through describe-instances' instance and
// its CapacityReservationId (locations as locate --all gives them for
// describe-capacity-reservation-topology, by reservation id).
func TestPlanJoinsHostsToTheirReservation(t *testing.T) {
	locs := filepath.Join(t.TempDir(), "locations")
	require.NoError(t, os.WriteFile(locs, []byte("cr-0b7e2f4a9c1d3e508 nn-4a1b2c3d4e5f60718/nn-5b2c3d4e5f6071829\n"), 0o644))
	rep := planJSON(t, cli.ExitOK, "--locations", locs, "--hosts", c16Hosts, "--instances", c16Instances, "--order", "rank")
	assert.Equal(t, 16, rep.Located)
	assert.Equal(t, 2, rep.Plans[0].Score.Depth)
}
