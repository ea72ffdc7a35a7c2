package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/nodeorder"
)

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
