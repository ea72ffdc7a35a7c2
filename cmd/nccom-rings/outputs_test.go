package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/asuser"
	"github.com/nccomring/libnccomring/internal/cli"
)

// F8 of issue 34: the files the tool writes where the operator says (-o,
// --junit, --emit-hostfile, --dump), in a directory another user can
// write into. The job's user (asuser.Victim) runs the tool; the attacker
// (asuser.Attacker) has planted, under the output's name, a link to a
// file of the victim's (before: written through) or a FIFO (before: the
// tool waited to open it for ever).
func TestOutputFilesFollowNoLinkAndWaitOnNoFIFO(t *testing.T) {
	asuser.Require(t)
	base := asuser.Dir(t)
	self := asuser.Self(t, base)
	in := filepath.Join(base, "in")
	require.NoError(t, os.Mkdir(in, 0o755))
	for _, f := range []string{d25Hosts, d25Locations} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(in, filepath.Base(f)), b, 0o644))
	}
	hosts, locations := filepath.Join(in, "hosts"), filepath.Join(in, "locations")
	dumps := filepath.Join(base, "dumps")
	code, _, errOut := runTool("plan", "--locations", locations, "--hosts", hosts, "--ranks-per-node", "4", "--dump", dumps)
	require.Equal(t, cli.ExitOK, code, errOut)
	rank := filepath.Join(dumps, "rank")

	// The victim's own files and a directory another user can write into
	// (a group share, not sticky).
	home, precious, shared := asuser.Share(t, base)

	outputs := []struct {
		name string
		args func(target string) []string
	}{
		{"report -o", func(target string) []string { return []string{"report", rank, "-o", target} }},
		{"verify --junit", func(target string) []string { return []string{"verify", "--junit", target, rank} }},
		{"plan --emit-hostfile", func(target string) []string {
			return []string{"plan", "--locations", locations, "--hosts", hosts, "--ranks-per-node", "4", "--emit-hostfile", target}
		}},
	}
	for i, o := range outputs {
		t.Run(o.name+" over a link", func(t *testing.T) {
			target := filepath.Join(shared, "link"+string(rune('0'+i)))
			require.NoError(t, os.Symlink(precious, target))
			asuser.Chown(t, asuser.Attacker, target)
			r := asuser.Tool(t, self, asuser.Victim, o.args(target)...)
			assert.Equal(t, cli.ExitOK, r.Code, r.Stderr)
			b, err := os.ReadFile(precious)
			require.NoError(t, err)
			assert.Equal(t, "precious\n", string(b), "the victim's file, which the planted link names, was written through it")
			fi, err := os.Lstat(target)
			require.NoError(t, err)
			require.True(t, fi.Mode().IsRegular(), "%s is %v, want the output as a regular file in the link's place", target, fi.Mode())
			assert.Equal(t, uint32(asuser.Victim), fi.Sys().(*syscall.Stat_t).Uid)
			assert.NotZero(t, fi.Size())
		})
		t.Run(o.name+" over a FIFO", func(t *testing.T) {
			target := filepath.Join(shared, "fifo"+string(rune('0'+i)))
			asuser.PlantFIFO(t, target)
			// No reader ever comes: an open for writing would wait for
			// ever (asuser.Tool's minute ends it, and fails).
			r := asuser.Tool(t, self, asuser.Victim, o.args(target)...)
			assert.Equal(t, cli.ExitUnusable, r.Code)
			assert.Contains(t, r.Stderr, target+": is a FIFO, not a regular file")
			fi, err := os.Lstat(target)
			require.NoError(t, err)
			assert.Equal(t, os.ModeNamedPipe, fi.Mode().Type(), "the FIFO was replaced")
		})
	}

	// plan --dump DIR through a link the attacker planted to the victim's
	// home: before, the dumps went into it (DIR/rank, DIR/network made
	// there); now the link on the path is refused.
	t.Run("plan --dump through a link", func(t *testing.T) {
		link := filepath.Join(shared, "dumps")
		require.NoError(t, os.Symlink(home, link))
		asuser.Chown(t, asuser.Attacker, link)
		r := asuser.Tool(t, self, asuser.Victim, "plan", "--locations", locations, "--hosts", hosts, "--ranks-per-node", "4", "--dump", link)
		assert.Equal(t, cli.ExitUnusable, r.Code)
		assert.Contains(t, r.Stderr, `"`+link+`" is a symbolic link on the dump directory's path`)
		entries, err := os.ReadDir(home)
		require.NoError(t, err)
		require.Len(t, entries, 1, "something was made in the victim's home through the link")
		assert.Equal(t, "precious", entries[0].Name())
	})
}

// TestHelperTool is the tool's process of the tests that run it as
// another user (asuser.Tool).
func TestHelperTool(t *testing.T) {
	args, ok := asuser.HelperArgs()
	if !ok {
		t.Skip("the tool's process of tests that run it as another user")
	}
	os.Exit(run(args, os.Stdout, os.Stderr))
}
