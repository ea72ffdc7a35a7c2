package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkInstancesBounded is issue 36's readers of --instances files under
// TestReadersStayBoundedOnHostileInputs's rules: each kind, a file of
// many records on as few lines as the kind allows, 2 MB and 4 MB, its
// last record joining the host to the one instance of a small topology;
// locate reads it whole, joins and locates (exit 0), its CPU time no
// more than 3x the half's.
func checkInstancesBounded(t *testing.T, dir, tool string) {
	topo := filepath.Join(dir, "instances-topology.json")
	require.NoError(t, os.WriteFile(topo, []byte(`{"Instances": [{"InstanceId": "i-0ffffffffffffffff", "NetworkNodes": ["nn-1", "nn-2"]}]}`), 0o644))
	kinds := []struct {
		name            string
		head, sep, tail string
		record          func(n int) string
		last            string
	}{
		{"describe-instances, one line", `{"Reservations": [{"Instances": [`, ",", `]}]}`,
			func(n int) string {
				return fmt.Sprintf(`{"InstanceId":"i-%017x","PrivateDnsName":"ip-10-%d-%d-%d.ec2.internal","PrivateIpAddress":"10.%d.%d.%d","Tags":[{"Key":"Name","Value":"h%d"}]}`,
					n, n>>16&255, n>>8&255, n&255, n>>16&255, n>>8&255, n&255, n)
			},
			`{"InstanceId":"i-0ffffffffffffffff","Tags":[{"Key":"Name","Value":"target-host"}]}`},
		{"kubectl get pods, one line", `{"kind": "List", "items": [`, ",", `]}`,
			func(n int) string {
				return fmt.Sprintf(`{"metadata":{"name":"pod-%d","namespace":"default"},"spec":{"nodeName":"node-%d"},"status":{"podIP":"10.%d.%d.%d"}}`, n, n, n>>16&255, n>>8&255, n&255)
			},
			`{"metadata":{"name":"target-host"},"spec":{"nodeName":"i-0ffffffffffffffff"}}`},
		{"scontrol show nodes", "", "", "",
			func(n int) string {
				return fmt.Sprintf("NodeName=trn-%d Arch=x86_64 NodeAddr=10.%d.%d.%d NodeHostName=trn-%d OS=Linux 5.10 #1 SMP\n", n, n>>16&255, n>>8&255, n&255, n)
			},
			"NodeName=target-host\n   InstanceId=i-0ffffffffffffffff\n"},
		{"HOST INSTANCE map", "", "", "",
			func(n int) string { return fmt.Sprintf("h%d i-%017x\n", n, n) },
			"target-host i-0ffffffffffffffff\n"},
	}
	for k, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			paths := map[string]string{}
			for which, size := range map[string]int{"half": 2_000_000, "full": 4_000_000} {
				paths[which] = filepath.Join(dir, fmt.Sprintf("instances-%d-%s", k, which))
				writeGenerated(t, paths[which], func(w *bufio.Writer) {
					w.WriteString(kind.head)
					written := len(kind.head) + len(kind.last) + len(kind.tail)
					for n := 0; written < size; n++ {
						r := kind.record(n) + kind.sep
						w.WriteString(r)
						written += len(r)
					}
					w.WriteString(kind.last + kind.tail)
				})
			}
			args := func(which string) []string {
				return []string{"locate", "--host", "target-host", "--instances", paths[which], "ec2:" + topo}
			}
			checkBounded(t, tool, 20*time.Second, args("half"), args("full"), func(t *testing.T, which string, r boundedRun) {
				assert.Equal(t, 0, r.code, "%s: %s", which, r.stderr)
				assert.Equal(t, "nn-1/nn-2\n", r.stdout, which)
			})
		})
	}
}
