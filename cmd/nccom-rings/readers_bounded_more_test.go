package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkMoreReadersBounded is issue 36's item 4 for the readers the first
// round left without a doubled input: the capacity reservation topology,
// a Slurm host list expanded, the block plugin's two files, the locations
// file and the hostfile of plan --hosts. (SLURM_TOPOLOGY_ADDR and
// SLURM_JOB_NODELIST are variables of at most 64 KiB, refused beyond it:
// location's unit tests.) Each runs as the built tool on an input and on one half
// its size under TestReadersStayBoundedOnHostileInputs's rules (exit code,
// no runtime fatal error, CPU time of the full input at most 3x the
// half's, at most 512 MB resident).
func checkMoreReadersBounded(t *testing.T, dir, tool string) {
	// A one-line describe-capacity-reservation-topology of 2.4 MB: every
	// reservation is located, each on line 1.
	t.Run("locate ec2-reservation: 2.4 MB one-line JSON", func(t *testing.T) {
		paths, count := writeJSONPair(t, dir, "-reservations.json", `{"CapacityReservations":[`, func(n int) string {
			return fmt.Sprintf(`{"CapacityReservationId":"cr-%017x","State":"active","NetworkNodes":["nn-1","nn-%d"]}`, n, n%10)
		})
		checkBounded(t, tool, 10*time.Second,
			[]string{"locate", "--all", "ec2-reservation:" + paths["half"]}, []string{"locate", "--all", "ec2-reservation:" + paths["full"]},
			locatedEach(count, "cr-00000000000000000 nn-1/nn-0", func(n int) string { return fmt.Sprintf("cr-%017x nn-1/nn-%d", n-1, (n-1)%10) }))
		assert.Equal(t, 24_741, count["full"])
	})

	// A topology.conf whose one leaf lists 400,000 and 800,000 nodes as
	// one Slurm host list (a file may give 1,000,000 names), expanded and
	// located (exit 0). Before this test the 999,998 names a file may give
	// took 635 MB resident: the index grown by doubling, and every host's
	// location split again to look for collisions.
	t.Run("locate slurm: a node range of 800,000 names", func(t *testing.T) {
		paths := map[string]string{}
		for which, names := range map[string]int{"half": 400_000, "full": 800_000} {
			paths[which] = filepath.Join(dir, which+"-range.conf")
			writeGenerated(t, paths[which], func(w *bufio.Writer) {
				fmt.Fprintf(w, "SwitchName=leaf0 Nodes=n[0000000-%07d]\nSwitchName=top Switches=leaf0\n", names-1)
			})
		}
		checkBounded(t, tool, 20*time.Second,
			[]string{"locate", "--all", "slurm:" + paths["half"]}, []string{"locate", "--all", "slurm:" + paths["full"]},
			func(t *testing.T, which string, r boundedRun) {
				assert.Equal(t, 0, r.code, "%s: %s", which, r.stderr)
				names := map[string]int{"half": 400_000, "full": 800_000}[which]
				assert.Equal(t, names+1, strings.Count(r.stdout, "\n"), which) // a "#" line, then a host a line
				assert.True(t, strings.HasSuffix(r.stdout, fmt.Sprintf("\nn%07d top/leaf0\n", names-1)), which)
			})
	})

	// The most names a file may give (1,000,000, the switch's among
	// them), located within 512 MB: 635 MB before this test.
	t.Run("locate slurm: the most names a file may give", func(t *testing.T) {
		path := filepath.Join(dir, "most-names.conf")
		require.NoError(t, os.WriteFile(path, []byte("SwitchName=leaf0 Nodes=n[0000000-0999998]\nSwitchName=top Switches=leaf0\n"), 0o644))
		r := runBounded(t, tool, 20*time.Second, "locate", "--all", "slurm:"+path)
		assert.Equal(t, 0, r.code, r.stderr)
		assert.True(t, strings.HasSuffix(r.stdout, "\nn0999998 top/leaf0\n"))
		assert.Less(t, r.residentMB, boundedResidentMB, "the largest resident set, in MB")
		t.Logf("%v CPU, %d MB resident at most", r.cpu, r.residentMB)
	})

	// The block plugin's topology.conf and topology.yaml: 20,000 and
	// 40,000 blocks of two nodes (the yaml 9,000 and 18,000, within its
	// 1 MiB), each node located by its block (exit 0).
	t.Run("locate slurm: blocks", func(t *testing.T) {
		for _, kind := range []struct {
			name   string
			blocks map[string]int
			head   string
			block  string
		}{
			{"topology.conf", map[string]int{"half": 20_000, "full": 40_000}, "", "BlockName=b%d Nodes=n%d-[0-1]\n"},
			{"topology.yaml", map[string]int{"half": 9_000, "full": 18_000}, "- topology: t\n  block:\n    blocks:\n", "      - block: b%d\n        nodes: n%d-[0-1]\n"},
		} {
			paths := map[string]string{}
			for which, blocks := range kind.blocks {
				paths[which] = filepath.Join(dir, which+"-blocks-"+kind.name)
				writeGenerated(t, paths[which], func(w *bufio.Writer) {
					w.WriteString(kind.head)
					for i := range blocks {
						fmt.Fprintf(w, kind.block, i, i)
					}
				})
			}
			checkBounded(t, tool, 10*time.Second,
				[]string{"locate", "--all", "slurm:" + paths["half"]}, []string{"locate", "--all", "slurm:" + paths["full"]},
				func(t *testing.T, which string, r boundedRun) {
					assert.Equal(t, 0, r.code, "%s %s: %s", kind.name, which, r.stderr)
					assert.Equal(t, 2*kind.blocks[which]+1, strings.Count(r.stdout, "\n"), "%s %s", kind.name, which)
					assert.Contains(t, r.stdout, fmt.Sprintf("\nn%d-1 b%d\n", kind.blocks[which]-1, kind.blocks[which]-1), "%s %s", kind.name, which)
				})
		}
	})

	// The locations file of plan --locations, 2.7 MB (100,000 hosts) and
	// half that, the 16 hosts of the hostfile located in it: read whole,
	// the job planned in rank order (exit 0), so that the file's reading
	// is most of the work.
	t.Run("plan --locations: a 2.7 MB locations file", func(t *testing.T) {
		hosts := filepath.Join(dir, "plan-hosts")
		writeGenerated(t, hosts, func(w *bufio.Writer) {
			for n := range 16 {
				fmt.Fprintf(w, "host-%06d\n", 3_000*n)
			}
		})
		paths := map[string]string{}
		for which, lines := range map[string]int{"half": 50_000, "full": 100_000} {
			paths[which] = filepath.Join(dir, which+"-locations")
			writeGenerated(t, paths[which], func(w *bufio.Writer) {
				for n := range lines {
					fmt.Fprintf(w, "host-%06d spine%d/leaf%03d\n", n, n/1024, n/64)
				}
			})
		}
		args := func(which string) []string {
			return []string{"plan", "--locations", paths[which], "--hosts", hosts, "--ranks-per-node", "1", "--order", "rank"}
		}
		checkBounded(t, tool, 20*time.Second, args("half"), args("full"), func(t *testing.T, which string, r boundedRun) {
			assert.Equal(t, 0, r.code, "%s: %s", which, r.stderr)
			first, _, _ := strings.Cut(r.stdout, "\n")
			assert.True(t, strings.HasPrefix(first, "nccom-rings plan: 16 hosts x 1 rank = 16 ranks;"), "%s: %s", which, first)
			assert.Contains(t, r.stdout, "\nrank   ", which)
		})
	})

	// The hostfile of plan --hosts, every line a Slurm host list of two
	// hosts: 512 and 1,024 lines, 1,024 and 2,048 hosts (plan takes 4,096;
	// its ring stage, not the hostfile, is most of the work there).
	t.Run("plan --hosts: a hostfile of host lists", func(t *testing.T) {
		locs := filepath.Join(dir, "hostlist-locations")
		writeGenerated(t, locs, func(w *bufio.Writer) {
			for n := range 4096 {
				fmt.Fprintf(w, "h%05d spine0/leaf%02d\n", n, n/256)
			}
		})
		paths := map[string]string{}
		for which, lines := range map[string]int{"half": 512, "full": 1024} {
			paths[which] = filepath.Join(dir, which+"-hostlists")
			writeGenerated(t, paths[which], func(w *bufio.Writer) {
				for n := range lines {
					fmt.Fprintf(w, "h[%05d-%05d] slots=1\n", 2*n, 2*n+1)
				}
			})
		}
		args := func(which string) []string {
			return []string{"plan", "--locations", locs, "--hosts", paths[which], "--ranks-per-node", "1", "--order", "rank"}
		}
		checkBounded(t, tool, 20*time.Second, args("half"), args("full"), func(t *testing.T, which string, r boundedRun) {
			assert.Equal(t, 0, r.code, "%s: %s", which, r.stderr)
			first, _, _ := strings.Cut(r.stdout, "\n")
			hosts := map[string]int{"half": 1024, "full": 2048}[which]
			assert.True(t, strings.HasPrefix(first, fmt.Sprintf("nccom-rings plan: %d hosts x 1 rank = %d ranks;", hosts, hosts)), "%s: %s", which, first)
		})
	})
}
