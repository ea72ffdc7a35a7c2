package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/cli"
)

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
