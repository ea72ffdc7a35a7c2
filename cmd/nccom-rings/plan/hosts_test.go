package plan_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/plan"
)

// A hostfile line whose first field is a Slurm host list stands for its
// hosts, each keeping the rest of the line (its slots, its comment), as
// EmitHostfile writes them back.
func TestReadHostfileExpandsHostLists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(path, []byte("login1 slots=2\n  trn[08-10]:4  # rack 1\nx,y slots=2\n"), 0o644))
	hosts, err := plan.ReadHostfile(path)
	require.NoError(t, err)
	assert.Equal(t, []plan.Host{
		{Name: "login1", Line: 1, Text: "login1 slots=2", Slots: 2},
		{Name: "trn08", Line: 2, Text: "  trn08:4  # rack 1", Slots: 4},
		{Name: "trn09", Line: 2, Text: "  trn09:4  # rack 1", Slots: 4},
		{Name: "trn10", Line: 2, Text: "  trn10:4  # rack 1", Slots: 4},
		{Name: "x", Line: 3, Text: "x slots=2", Slots: 2},
		{Name: "y", Line: 3, Text: "y slots=2", Slots: 2},
	}, hosts)

	require.NoError(t, os.WriteFile(path, []byte("trn09\ntrn[08-10]\n"), 0o644))
	_, err = plan.ReadHostfile(path)
	assert.EqualError(t, err, path+`:2:1: host "trn09" again; first on line 1`)

	hosts, err = plan.HostsOfList("SLURM_JOB_NODELIST", "trn[1-2],login")
	require.NoError(t, err)
	assert.Equal(t, []plan.Host{{Name: "trn1", Text: "trn1"}, {Name: "trn2", Text: "trn2"}, {Name: "login", Text: "login"}}, hosts)
	_, err = plan.HostsOfList("SLURM_JOB_NODELIST", "a,A")
	assert.EqualError(t, err, `SLURM_JOB_NODELIST: host "A" twice in the list`)
}

func TestLocateJoined(t *testing.T) {
	in, err := location.ParseInstances("map", []byte("trn1 i-1\n"))
	require.NoError(t, err)
	hosts := []plan.Host{{Name: "trn1"}, {Name: "i-2"}, {Name: "trn3"}}
	entries := []location.Entry{{Host: "i-1", Location: "a/b"}, {Host: "I-2", Location: "a/c"}}
	locs, joined := plan.LocateJoined(hosts, entries, []*location.Instances{in})
	assert.Equal(t, []string{"a/b", "a/c", ""}, locs)
	assert.Equal(t, location.Joined{Name: "i-1", File: "map", Line: 1, Same: []string{"trn1", "i-1"}}, joined[0])
	assert.Equal(t, location.Joined{Name: "i-2", Same: []string{"i-2"}}, joined[1])
	assert.Equal(t, "not listed, and not named in map", joined[2].Reason)
}
