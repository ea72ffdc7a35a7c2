package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/asuser"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/junit"
)

// F8 of issue 34 for nccom-abi's --junit: the job's user (asuser.Victim)
// writes the file into a directory another user (asuser.Attacker) can
// write into, where they planted a link to a file of the victim's (before:
// written through) or a FIFO (before: the tool waited to open it for
// ever). The library judged is not one (no fixture needed): the run
// exits 2 and the JUnit file says why, as a CI step would see it.
func TestJUnitFileFollowsNoLinkAndWaitsOnNoFIFO(t *testing.T) {
	asuser.Require(t)
	base := asuser.Dir(t)
	self := asuser.Self(t, base)
	lib := filepath.Join(base, "libnccom.so.2")
	require.NoError(t, os.WriteFile(lib, []byte("not an ELF file\n"), 0o644))
	_, precious, shared := asuser.Share(t, base)

	for _, command := range []string{"check", "preload"} {
		t.Run(command+" over a link", func(t *testing.T) {
			target := filepath.Join(shared, command+"-link.xml")
			require.NoError(t, os.Symlink(precious, target))
			asuser.Chown(t, asuser.Attacker, target)
			r := asuser.Tool(t, self, asuser.Victim, command, "--junit", target, lib)
			assert.Equal(t, cli.ExitUnusable, r.Code)
			assert.NotContains(t, r.Stderr, "--junit")
			b, err := os.ReadFile(precious)
			require.NoError(t, err)
			assert.Equal(t, "precious\n", string(b), "the victim's file, which the planted link names, was written through it")
			fi, err := os.Lstat(target)
			require.NoError(t, err)
			require.True(t, fi.Mode().IsRegular(), "%s is %v, want the JUnit file as a regular file in the link's place", target, fi.Mode())
			b, err = os.ReadFile(target)
			require.NoError(t, err)
			s, err := junit.Parse(b)
			require.NoError(t, err, "%s", b)
			_, _, errs := s.Counts()
			assert.Equal(t, 1, errs, "the errored testcase saying why %s could not be read", lib)
		})
		t.Run(command+" over a FIFO", func(t *testing.T) {
			target := filepath.Join(shared, command+"-fifo.xml")
			asuser.PlantFIFO(t, target)
			// No reader ever comes: an open for writing would wait for
			// ever (asuser.Tool's minute ends it, and fails).
			r := asuser.Tool(t, self, asuser.Victim, command, "--junit", target, lib)
			assert.Equal(t, cli.ExitUnusable, r.Code)
			assert.Contains(t, r.Stderr, "--junit "+target+": JUnit XML: write "+target+": is a FIFO, not a regular file")
			fi, err := os.Lstat(target)
			require.NoError(t, err)
			assert.Equal(t, os.ModeNamedPipe, fi.Mode().Type(), "the FIFO was replaced")
		})
	}
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
