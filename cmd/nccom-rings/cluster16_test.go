package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cli"
)

// Issue 36, done-when 1: one cluster of 16 hosts, trn1-st-trn1-1..16 in
// 4 leaves of 4 under 2 spines under one core, described in each
// per-host source an operator has (testdata/cluster16: EC2's instance
// topology joined to the hosts by describe-instances, EKS's and
// Topograph's node labels, topology.conf tree and block lines,
// topology.yaml tree and block, scontrol show topology, and
// SLURM_TOPOLOGY_ADDR in each host's task). Each gives, by its explicit
// source and by --from auto, the same groups of hosts at every level it
// has: a tree the core, the spines and the leaves; a block the leaves.
// Names differ by source (EKS names nodes ip-..., and its providerID the
// instance); names.txt says which host each is.

const cluster16 = "testdata/cluster16"

// cluster16Names maps every name of a host (Slurm's, the instance id,
// the Kubernetes node's) to its Slurm name.
func cluster16Names(t *testing.T) map[string]string {
	data, err := os.ReadFile(filepath.Join(cluster16, "names.txt"))
	require.NoError(t, err)
	names := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		for _, n := range f {
			names[n] = f[0]
		}
	}
	require.Len(t, names, 48)
	return names
}

// groupsByLevel is, for each level of the locations (outermost first),
// the groups of hosts that share their names up to it, each group its
// hosts sorted and the groups sorted: what a level says, whatever its
// names.
func groupsByLevel(t *testing.T, lines string, names map[string]string) [][]string {
	t.Helper()
	byPrefix := map[int]map[string][]string{}
	depth := -1
	hosts := 0
	for _, line := range strings.Split(lines, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		require.Len(t, f, 2, line)
		host, ok := names[f[0]]
		require.True(t, ok, "host %q is in no line of names.txt", f[0])
		hosts++
		parts := strings.Split(f[1], "/")
		if depth < 0 {
			depth = len(parts)
		}
		require.Len(t, parts, depth, "every host has as many levels: %s", line)
		for l := 1; l <= depth; l++ {
			if byPrefix[l] == nil {
				byPrefix[l] = map[string][]string{}
			}
			key := strings.Join(parts[:l], "/")
			byPrefix[l][key] = append(byPrefix[l][key], host)
		}
	}
	require.Equal(t, 16, hosts)
	var out [][]string
	for l := 1; l <= depth; l++ {
		var groups []string
		for _, hs := range byPrefix[l] {
			slices.SortFunc(hs, func(a, b string) int { return hostNumber(a) - hostNumber(b) })
			groups = append(groups, strings.Join(hs, ","))
		}
		slices.Sort(groups)
		out = append(out, groups)
	}
	return out
}

func hostNumber(name string) int {
	var n int
	fmt.Sscanf(strings.TrimPrefix(name, "trn1-st-trn1-"), "%d", &n)
	return n
}

func TestCluster16EverySourceGivesTheSameGroups(t *testing.T) {
	noHostHints(t)
	names := cluster16Names(t)
	span := func(lo, hi int) string {
		var hs []string
		for i := lo; i <= hi; i++ {
			hs = append(hs, fmt.Sprintf("trn1-st-trn1-%d", i))
		}
		return strings.Join(hs, ",")
	}
	all := []string{span(1, 16)}
	spines := []string{span(1, 8), span(9, 16)}
	leaves := []string{span(1, 4), span(13, 16), span(5, 8), span(9, 12)} // sorted as strings
	slices.Sort(leaves)
	tree := [][]string{all, spines, leaves}
	blocks := [][]string{leaves}

	for _, c := range []struct {
		file, source string
		want         [][]string
	}{
		{"eks-nodes.json", "k8s", tree},
		{"topograph-nodes.json", "k8s", tree},
		{"topograph-fabric-nodes.json", "k8s", tree},
		{"topology-tree.conf", "slurm", tree},
		{"topology-block.conf", "slurm", blocks},
		{"topology-tree.yaml", "slurm", tree},
		{"topology-block.yaml", "slurm", blocks},
		{"scontrol-topology.txt", "slurm", tree},
	} {
		path := filepath.Join(cluster16, c.file)
		for _, args := range [][]string{
			{"locate", "--all", c.source + ":" + path},
			{"locate", "--all", "--from", c.source, path},
			{"locate", "--all", path},
			{"locate", "--all", "--from", "auto", path},
		} {
			code, out, errOut := runTool(args...)
			require.Equal(t, cli.ExitOK, code, "%v: %s", args, errOut)
			assert.Empty(t, errOut, args)
			assert.Equal(t, c.want, groupsByLevel(t, out, names), args)
		}
	}

	// SLURM_TOPOLOGY_ADDR: one line in each host's task, together the
	// locations file of the cluster.
	data, err := os.ReadFile(filepath.Join(cluster16, "slurm-env.txt"))
	require.NoError(t, err)
	var lines strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		code, out, errOut := runTool("locate", "--all", "--from", "slurm-env")
		require.Equal(t, cli.ExitOK, code, errOut)
		lines.WriteString(out)
		// And the task's own location, its host from the variable.
		code, one, errOut := runTool("locate", "--from", "slurm-env")
		require.Equal(t, cli.ExitOK, code, errOut)
		assert.Equal(t, strings.Fields(strings.TrimSpace(strings.Split(out, "\n")[1]))[1]+"\n", one)
	}
	assert.Equal(t, tree, groupsByLevel(t, lines.String(), names))

	// EC2's instance topology names instances, not hosts: each host is
	// located by its name, as a job script on the host would, through
	// describe-instances (its instance's Name tag), by the explicit
	// source and by --from auto.
	topo := filepath.Join(cluster16, "ec2-topology.json")
	instances := filepath.Join(cluster16, "describe-instances.json")
	for _, source := range [][]string{
		{"ec2:" + topo},
		{"--from", "ec2", topo},
		{topo},
		{"--from", "auto", topo},
	} {
		var lines strings.Builder
		for i := 1; i <= 16; i++ {
			host := fmt.Sprintf("trn1-st-trn1-%d", i)
			args := append([]string{"locate", "--host", host, "--instances", instances}, source...)
			code, out, errOut := runTool(args...)
			require.Equal(t, cli.ExitOK, code, "%v: %s", args, errOut)
			assert.Empty(t, errOut, args)
			lines.WriteString(host + " " + out)
		}
		assert.Equal(t, tree, groupsByLevel(t, lines.String(), names), source)
	}
	// And all at once, by host name, as plan writes them for score and
	// report (--emit-locations).
	locs := filepath.Join(t.TempDir(), "locations")
	code, out, errOut := runTool("locate", "--all", "ec2:"+topo)
	require.Equal(t, cli.ExitOK, code, errOut)
	require.NoError(t, os.WriteFile(locs, []byte(out), 0o644))
	byName := filepath.Join(t.TempDir(), "by-name")
	code, _, errOut = runTool("plan", "--locations", locs, "--hosts", filepath.Join(cluster16, "hosts.txt"), "--instances", instances, "--emit-locations", byName)
	require.Equal(t, cli.ExitOK, code, errOut)
	data, err = os.ReadFile(byName)
	require.NoError(t, err)
	assert.Equal(t, tree, groupsByLevel(t, string(data), names), "plan --emit-locations")

	// A Kubernetes node is found by its instance id too.
	code, out, errOut = runTool("locate", "--instance", "i-0c16a1b2c3d4e5f0b", filepath.Join(cluster16, "eks-nodes.json"))
	require.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "nn-4f1c0a9b3d2e51000/nn-5a2b3c4d5e6f72002/nn-6c3d4e5f607183003\n", out)
}

// Before launch: the cluster's four Capacity Reservations, one a leaf,
// each located where EKS later places its four nodes.
func TestCluster16CapacityReservations(t *testing.T) {
	noHostHints(t)
	code, out, errOut := runTool("locate", "--all", filepath.Join(cluster16, "capacity-reservation-topology.json"))
	require.Equal(t, cli.ExitOK, code, errOut)
	_, eks, _ := runTool("locate", "--all", "k8s:"+filepath.Join(cluster16, "eks-nodes.json"))
	leafOf := map[string]bool{}
	for _, line := range strings.Split(eks, "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(f[0], "#") {
			leafOf[f[1]] = true
		}
	}
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(f[0], "#") {
			assert.True(t, leafOf[f[1]], "reservation %s at %s, where no node is", f[0], f[1])
			got = append(got, f[0])
		}
	}
	assert.Equal(t, []string{"cr-0c16b1c2d3e4f5001", "cr-0c16b1c2d3e4f5002", "cr-0c16b1c2d3e4f5003", "cr-0c16b1c2d3e4f5004"}, got)
	assert.Len(t, leafOf, 4)
}

// The files are one cluster: each describe-instances instance (a host,
// by its Name tag) is in the EC2 instance topology and is the EKS node
// of its private DNS name (spec.providerID), in the same zone and under
// the same network nodes, and its CapacityReservationId is one of the
// cluster's reservations, located at its leaf.
func TestCluster16FilesNameTheSameInstances(t *testing.T) {
	read := func(name string, v any) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(cluster16, name))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, v), name)
	}
	var described struct {
		Reservations []struct {
			Instances []struct {
				InstanceId, PrivateDnsName, CapacityReservationId string
				Placement                                         struct{ AvailabilityZone string }
				Tags                                              []struct{ Key, Value string }
			}
		}
	}
	read("describe-instances.json", &described)
	var topology struct {
		Instances []struct {
			InstanceId, AvailabilityZone string
			NetworkNodes                 []string
		}
	}
	read("ec2-topology.json", &topology)
	var eks struct {
		Items []struct {
			Metadata struct {
				Name   string
				Labels map[string]string
			}
			Spec struct{ ProviderID string }
		}
	}
	read("eks-nodes.json", &eks)
	var reservations struct {
		CapacityReservations []struct {
			CapacityReservationId, AvailabilityZone string
			NetworkNodes                            []string
		}
	}
	read("capacity-reservation-topology.json", &reservations)

	inTopology := map[string][]string{}
	for _, i := range topology.Instances {
		inTopology[i.InstanceId] = i.NetworkNodes
		assert.Equal(t, "us-west-2d", i.AvailabilityZone, i.InstanceId)
	}
	type node struct {
		providerID string
		nodes      []string
	}
	byNodeName := map[string]node{}
	for _, n := range eks.Items {
		l := n.Metadata.Labels
		byNodeName[n.Metadata.Name] = node{n.Spec.ProviderID, []string{l["topology.k8s.aws/network-node-layer-1"], l["topology.k8s.aws/network-node-layer-2"], l["topology.k8s.aws/network-node-layer-3"]}}
	}
	reserved := map[string][]string{}
	for _, r := range reservations.CapacityReservations {
		reserved[r.CapacityReservationId] = r.NetworkNodes
		assert.Equal(t, "us-west-2d", r.AvailabilityZone, r.CapacityReservationId)
	}
	names := cluster16Names(t)
	hosts := map[string]bool{}
	for _, r := range described.Reservations {
		for _, i := range r.Instances {
			host := ""
			for _, tag := range i.Tags {
				if tag.Key == "Name" {
					host = tag.Value
				}
			}
			hosts[host] = true
			id := i.InstanceId
			assert.Equal(t, host, names[id], "names.txt: instance %s", id)
			assert.Equal(t, host, names[i.PrivateDnsName], "names.txt: %s's node %s", id, i.PrivateDnsName)
			nn, ok := inTopology[id]
			assert.True(t, ok, "%s (%s) is not in ec2-topology.json", id, host)
			n, ok := byNodeName[i.PrivateDnsName]
			if assert.True(t, ok, "%s (%s): no EKS node %s", id, host, i.PrivateDnsName) {
				assert.Equal(t, "aws:///"+i.Placement.AvailabilityZone+"/"+id, n.providerID, host)
				assert.Equal(t, nn, n.nodes, "%s: network nodes of ec2-topology.json and eks-nodes.json", host)
			}
			leaf, ok := reserved[i.CapacityReservationId]
			if assert.True(t, ok, "%s (%s): reservation %q is not in capacity-reservation-topology.json", id, host, i.CapacityReservationId) {
				assert.Equal(t, nn, leaf, "%s: reservation %s is not at its instance's network nodes", host, i.CapacityReservationId)
			}
		}
	}
	assert.Len(t, hosts, 16)
	assert.Len(t, inTopology, 16)
	assert.Len(t, byNodeName, 16)
}
