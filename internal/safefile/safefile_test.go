package safefile_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/safefile"
)

// Every kind of path another user could leave where a file is expected,
// with the text each gives. A FIFO without a writer would block an
// ordinary open for ever; here it must return at once.
func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("twelve bytes"), 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(file, link))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))

	for _, c := range []struct {
		path   string
		follow safefile.Follow
		want   string
	}{
		{link, safefile.NoLinks, "is a symbolic link, not a regular file"},
		{fifo, safefile.FollowLinks, "is a FIFO, not a regular file"},
		{"/dev/zero", safefile.FollowLinks, "is a character device, not a regular file"},
		{dir, safefile.FollowLinks, "is a directory, not a regular file"},
		{filepath.Join(dir, "none"), safefile.FollowLinks, "open " + filepath.Join(dir, "none") + ": no such file or directory"},
	} {
		_, err := safefile.Read(c.path, c.follow, 1<<20)
		assert.EqualError(t, err, c.want, c.path)
	}
	_, err := safefile.Read(link, safefile.NoLinks, 1<<20)
	assert.ErrorIs(t, err, safefile.ErrLink)
	data, err := safefile.Read(link, safefile.FollowLinks, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, "twelve bytes", string(data))
}

// The bound: a file of exactly max bytes is read; one byte more is
// refused before anything is read, with its size; a file that says it is
// empty but has more (a /proc file) is cut at max+1 and refused.
func TestReadBound(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("twelve bytes"), 0o600))
	data, err := safefile.Read(file, safefile.NoLinks, 12)
	require.NoError(t, err)
	assert.Len(t, data, 12)

	_, err = safefile.Read(file, safefile.NoLinks, 11)
	var big *safefile.TooBigError
	require.True(t, errors.As(err, &big), "%v", err)
	assert.Equal(t, safefile.TooBigError{Size: 12, Max: 11}, *big)
	assert.EqualError(t, err, "is 12 bytes, more than 11")

	_, err = safefile.Read("/proc/self/status", safefile.NoLinks, 16)
	require.True(t, errors.As(err, &big), "%v", err)
	assert.Equal(t, safefile.TooBigError{Size: -1, Max: 16}, *big)
	assert.EqualError(t, err, "grew past 16 bytes while it was read")
}

func TestKind(t *testing.T) {
	for mode, want := range map[os.FileMode]string{
		os.ModeNamedPipe:                  "a FIFO",
		os.ModeDevice | os.ModeCharDevice: "a character device",
		os.ModeDevice:                     "a block device",
		os.ModeDir:                        "a directory",
		os.ModeSocket:                     "a socket",
		os.ModeSymlink:                    "a symbolic link",
		os.ModeIrregular:                  "mode ?---------",
	} {
		assert.Equal(t, want, safefile.Kind(mode), "%v", mode)
	}
}

// WriteFile (the tools' -o, --junit, --emit-hostfile) replaces a link at
// its path instead of writing through it, refuses a FIFO, a device or a
// directory there without waiting or replacing it, and leaves no
// temporary file behind either way.
func TestWriteFileFollowsNoLinkAndWaitsOnNoFIFO(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o600))
	out := filepath.Join(dir, "out")
	require.NoError(t, os.Symlink(victim, out))

	require.NoError(t, safefile.WriteFile(out, []byte("report\n"), 0o644))
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(b), "the link's target was written")
	fi, err := os.Lstat(out)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "%s is %v, want a regular file in the link's place", out, fi.Mode())
	b, err = os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "report\n", string(b))

	// Again over the regular file it made: replaced whole.
	require.NoError(t, safefile.WriteFile(out, []byte("2\n"), 0o644))
	b, _ = os.ReadFile(out)
	assert.Equal(t, "2\n", string(b))

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	for _, c := range []struct{ path, want string }{
		// A FIFO without a reader: an ordinary open for writing would
		// wait for ever (go test's -timeout, or make test's watchdog,
		// would end it).
		{fifo, "write " + fifo + ": is a FIFO, not a regular file"},
		{"/dev/null", "write /dev/null: is a character device, not a regular file"},
		{sub, "write " + sub + ": is a directory, not a regular file"},
	} {
		err := safefile.WriteFile(c.path, []byte("x"), 0o644)
		assert.EqualError(t, err, c.want)
		var nr *safefile.NotRegularError
		assert.True(t, errors.As(err, &nr), "%v is a %T", err, err)
	}
	fi, err = os.Lstat(fifo)
	require.NoError(t, err)
	assert.Equal(t, os.ModeNamedPipe, fi.Mode().Type(), "the FIFO was replaced")

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"fifo", "out", "sub"}, names, "a temporary file was left behind")

	err = safefile.WriteFile(filepath.Join(dir, "none", "out"), nil, 0o644)
	assert.ErrorIs(t, err, syscall.ENOENT)
}

// docs/security.md, Output files: the file WriteFile leaves is new, mode
// perm less the umask and the writer's, whatever the file it replaced
// had; a write that fails (here past RLIMIT_FSIZE, EFBIG) leaves the
// file as it was and no temporary file beside it.
func TestWriteFileMakesANewFileAndAFailedWriteLeavesTheOldOne(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	require.NoError(t, os.WriteFile(out, []byte("old\n"), 0o666))
	require.NoError(t, os.Chmod(out, 0o666))
	other := filepath.Join(dir, "other")
	require.NoError(t, os.Link(out, other))

	old := syscall.Umask(0o027)
	err := safefile.WriteFile(out, []byte("new\n"), 0o644)
	syscall.Umask(old)
	require.NoError(t, err)
	fi, err := os.Lstat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode(), "not 0644 less the umask 027")
	assert.Equal(t, uint32(os.Getuid()), fi.Sys().(*syscall.Stat_t).Uid)
	b, _ := os.ReadFile(other)
	assert.Equal(t, "old\n", string(b), "the other hard link to the old file changed")

	// A write that fails part way.
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim))
	small := lim
	small.Cur = 1 << 12
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &small))
	err = safefile.WriteFile(out, make([]byte, 1<<16), 0o644)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim))
	assert.ErrorIs(t, err, syscall.EFBIG)
	b, _ = os.ReadFile(out)
	assert.Equal(t, "new\n", string(b), "a failed write changed the file")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"other", "out"}, names, "a temporary file was left behind")
}
