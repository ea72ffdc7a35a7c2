package ringdump

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/asuser"
)

// victimDir makes home/dumps, a directory of the job's user that only
// they can read (0700), holding one secret file, and returns its path.
func victimDir(t *testing.T, home string) string {
	t.Helper()
	victim := filepath.Join(home, "dumps")
	require.NoError(t, os.MkdirAll(victim, 0o700))
	require.NoError(t, os.Chmod(victim, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(victim, "secret"), []byte("key\n"), 0o600))
	return victim
}

// untouched fails t unless victim is still 0700 and holds the secret
// only.
func untouched(t *testing.T, victim string) {
	t.Helper()
	fi, err := os.Stat(victim)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("the victim's directory %s is now %04o, was 0700: its mode was changed by a call that did not create it", victim, fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(victim)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"secret"}) {
		t.Errorf("the victim's directory holds %q, want only its secret: a dump was written into it", names)
	}
}

// F3 of issue 34, made deterministic by the seam afterMkdir: another user
// who can write a directory on NCCOM_RING_DUMP's path swaps a component
// between two of the writer's steps. Before, CreateDir made the path with
// MkdirAll and then opened it again by its path: a parent swapped for a
// link to the victim's home in between made it open the victim's 0700
// directory as the one it had just made and chmod it to 0755.
func TestCreateDirChangesTheModeOfNoDirectoryItDidNotCreate(t *testing.T) {
	for _, c := range []struct {
		name string
		// dir is NCCOM_RING_DUMP under base; at is the path (under base)
		// whose creation triggers swap.
		dir, at string
		swap    func(t *testing.T, base, victim string)
		wantErr string // "" for a dump written elsewhere than victim
	}{
		{
			name: "a parent swapped for a link after the directory was made",
			dir:  "att/d/dumps", at: "att/d/dumps",
			swap: func(t *testing.T, base, victim string) {
				mustRename(t, filepath.Join(base, "att/d"), filepath.Join(base, "att/d.old"))
				mustSymlink(t, filepath.Dir(victim), filepath.Join(base, "att/d"))
			},
		},
		{
			name: "a parent swapped for a link before it was opened",
			dir:  "att/d/dumps", at: "att/d",
			swap: func(t *testing.T, base, victim string) {
				mustRename(t, filepath.Join(base, "att/d"), filepath.Join(base, "att/d.old"))
				mustSymlink(t, filepath.Dir(victim), filepath.Join(base, "att/d"))
			},
			wantErr: `/att/d" is a symbolic link on the dump directory's path: links there are not followed`,
		},
		{
			// The parent is writable by others (no sticky bit): whatever
			// is under the new name may not be what was made, so its
			// mode is left alone, and the victim's directory, which
			// passes the checks, only receives the dump.
			name: "the new directory swapped for the victim's in a parent others can write",
			dir:  "shared/dumps", at: "shared/dumps",
			swap: func(t *testing.T, base, victim string) {
				mustRename(t, filepath.Join(base, "shared/dumps"), filepath.Join(base, "shared/made"))
				mustRename(t, victim, filepath.Join(base, "shared/dumps"))
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			victim := victimDir(t, filepath.Join(base, "home"))
			for _, d := range []string{"att", "shared"} {
				require.NoError(t, os.Mkdir(filepath.Join(base, d), 0o755))
			}
			require.NoError(t, os.Chmod(filepath.Join(base, "shared"), 0o777))
			dir := filepath.Join(base, c.dir)
			var seen []string
			afterMkdir = func(path string) {
				seen = append(seen, path)
				if path == filepath.Join(base, c.at) {
					c.swap(t, base, victim)
				}
			}
			defer func() { afterMkdir = nil }()
			_, err := Write(dir, sample())
			if !slices.Contains(seen, filepath.Join(base, c.at)) {
				t.Fatalf("the seam saw %q, not %s: the swap never happened", seen, c.at)
			}
			if c.at == "shared/dumps" {
				// The victim's directory is where the dump directory
				// was: put it back to look at it.
				mustRename(t, filepath.Join(base, "shared/dumps"), victim)
				if err != nil {
					t.Fatalf("Write: %v, want the dump written", err)
				}
				fi, err := os.Stat(victim)
				if err != nil || fi.Mode().Perm() != 0o700 {
					t.Fatalf("the victim's directory is %v (%v), was 0700: its mode was changed by a call that did not create it", fi.Mode(), err)
				}
				return
			}
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("Write: %v, want the dump written into the directory it made", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("Write: %v, want %q", err, c.wantErr)
			}
			untouched(t, victim)
		})
	}
}

// Links on the path are refused, with the link's path in the text; the
// directory the path names without them is accepted.
func TestOpenDirRefusesALinkOnThePath(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	require.NoError(t, os.MkdirAll(filepath.Join(real, "dumps"), 0o755))
	mustSymlink(t, real, filepath.Join(base, "link"))
	_, err := Write(filepath.Join(base, "link", "dumps"), sample())
	want := `"` + filepath.Join(base, "link") + `" is a symbolic link on the dump directory's path: links there are not followed; name the directory without them`
	if err == nil || err.Error() != want {
		t.Fatalf("through a link: %v, want %s", err, want)
	}
	var de *DirError
	if !errors.As(err, &de) {
		t.Errorf("%T, want a *DirError", err)
	}
	if _, err := Write(filepath.Join(real, "dumps"), sample()); err != nil {
		t.Errorf("without the link: %v", err)
	}
	// A relative path starts from the working directory.
	t.Chdir(base)
	if _, err := Write("real/dumps", sample()); err != nil {
		t.Errorf("a relative path: %v", err)
	}
	if _, err := Write("link/dumps", sample()); err == nil || !strings.Contains(err.Error(), `"link" is a symbolic link on the dump directory's path`) {
		t.Errorf("a relative path through a link: %v", err)
	}
	// The directory itself a link: the text of before, which the C
	// half's tests and docs/errors.md's W1 quote.
	if _, err := Write("link/", sample()); err == nil || err.Error() != `"link/" is a symbolic link: a dump directory must not be one` {
		t.Errorf("the directory a link: %v", err)
	}
}

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, os.Rename(from, to))
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	require.NoError(t, os.Symlink(target, link))
}

// The attack of the first case above between two real users: the job's
// user (asuser.Victim) writes its dumps to a path through a scratch
// directory the attacker (asuser.Attacker) owns, and the attacker, who cannot touch the
// victim's 0700 directory, swaps the parent for a link to it at the seam
// (the victim's process stops there until the swap is done).
func TestCreateDirSwappedByAnotherUser(t *testing.T) {
	base, self := asuser.Prepare(t)
	home := filepath.Join(base, "home")
	victim := victimDir(t, home)
	asuser.Chown(t, asuser.Victim, home, victim, filepath.Join(victim, "secret"))
	require.NoError(t, os.Chmod(home, 0o755))
	att := filepath.Join(base, "att")
	require.NoError(t, os.Mkdir(att, 0o755))
	asuser.Chown(t, asuser.Attacker, att)
	// A scratch directory the attacker offers to all (1777, as /tmp): the
	// sticky bit keeps others from renaming the victim's entries, but not
	// the directory's owner.
	require.NoError(t, os.Chmod(att, 0o777|os.ModeSticky))
	dir := filepath.Join(att, "d", "dumps")

	var swapped bool
	result := runVictim(t, self, dir, func(path string) {
		if path != dir {
			return
		}
		for _, argv := range [][]string{{"mv", filepath.Join(att, "d"), filepath.Join(att, "d.old")}, {"ln", "-s", home, filepath.Join(att, "d")}} {
			if out, err := asuser.Command(asuser.Attacker, argv[0], argv[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("the attacker's %q: %v %s", argv, err, out)
			}
		}
		swapped = true
	})
	if !swapped {
		t.Fatalf("the victim's Write (%s) never stopped at the seam after making %s", result, dir)
	}
	t.Logf("the victim's Write: %s", result)
	untouched(t, victim)
}

// Components are opened with O_PATH: a directory on the path that the
// job's user may pass through but not list (0711, as some homes are) is
// no obstacle, as it is none to a path lookup.
func TestCreateDirPassesAnExecuteOnlyDirectory(t *testing.T) {
	base, self := asuser.Prepare(t)
	x := filepath.Join(base, "x")
	require.NoError(t, os.Mkdir(x, 0o711))
	require.NoError(t, os.Chmod(x, 0o711))
	home := filepath.Join(x, "home")
	require.NoError(t, os.Mkdir(home, 0o755))
	asuser.Chown(t, asuser.Victim, home)
	if got := runVictim(t, self, filepath.Join(home, "dumps"), nil); got != "<nil>" {
		t.Fatalf("the victim's Write through a 0711 directory: %s", got)
	}
}

// runVictim runs TestHelperVictimWrites as asuser.Victim, writing a dump
// into dir, calls atMkdir (when set) each time the victim's process
// stops at the seam, and returns what its Write returned.
func runVictim(t *testing.T, self, dir string, atMkdir func(path string)) string {
	t.Helper()
	// 60 s only to end a victim process that hangs; nothing is timed.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := asuser.Command(asuser.Victim, self, "-test.run=^TestHelperVictimWrites$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NCCOMRING_TEST_HELPER=victim", "NCCOMRING_TEST_DIR="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	go func() { <-ctx.Done(); cmd.Process.Kill() }()
	result := ""
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		line := lines.Text()
		switch {
		case strings.HasPrefix(line, "mkdir "):
			if atMkdir != nil {
				atMkdir(strings.TrimPrefix(line, "mkdir "))
			}
			io.WriteString(stdin, "go\n")
		case strings.HasPrefix(line, "done "):
			result = strings.TrimPrefix(line, "done ")
		}
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the victim's process did not end within 60 s (a limit to detect a hang, not a timing): %s", stderr.String())
	}
	if err != nil || result == "" {
		t.Fatalf("the victim's process: %v, result %q; stderr:\n%s", err, result, stderr.String())
	}
	return result
}

// TestHelperVictimWrites is the victim's process of
// TestCreateDirSwappedByAnotherUser: Write into NCCOMRING_TEST_DIR, saying
// "mkdir PATH" at the seam and waiting for a line before going on.
func TestHelperVictimWrites(t *testing.T) {
	if os.Getenv("NCCOMRING_TEST_HELPER") != "victim" {
		t.Skip("the victim's process of TestCreateDirSwappedByAnotherUser")
	}
	in := bufio.NewReader(os.Stdin)
	afterMkdir = func(path string) {
		fmt.Printf("mkdir %s\n", path)
		in.ReadString('\n')
	}
	_, err := Write(os.Getenv("NCCOMRING_TEST_DIR"), sample())
	fmt.Printf("done %v\n", err)
	os.Exit(0)
}

// The directories CreateDir makes are 0755 whatever the umask, parents
// too, when no other user could have swapped them before they were
// opened; in a parent others can write, the umask's mode is kept (the
// descriptor might be of a directory moved there, whose mode is not this
// call's to change).
func TestCreatedDirectoryModes(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	base := t.TempDir()
	if _, err := Write(filepath.Join(base, "new", "a", "dumps"), sample()); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"new", "new/a", "new/a/dumps"} {
		if fi, err := os.Stat(filepath.Join(base, d)); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: %v, %v; want 0755", d, fi.Mode(), err)
		}
	}
	shared := filepath.Join(base, "shared")
	require.NoError(t, os.Mkdir(shared, 0o700))
	require.NoError(t, os.Chmod(shared, 0o777))
	if _, err := Write(filepath.Join(shared, "dumps"), sample()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(shared, "dumps")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("shared/dumps: %v, %v; want 0700, the umask's", fi.Mode(), err)
	}
}
