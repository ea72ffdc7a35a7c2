package location_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/location"
)

func TestReadLocations(t *testing.T) {
	text := "# nccom-rings locate --all\n" +
		"\n" +
		"trn001 spine0/leaf1\n" +
		"  trn002\tspine0/leaf2   # a comment\r\n" +
		"i-0a1b2c3d4e5f60001 nn-1/nn-2/nn-3\n" +
		"\t\n" +
		"3 a:b/c.d/e_f/g-h" // the last line without "\n"; a node index as host
	entries, err := location.ReadLocations(strings.NewReader(text))
	require.NoError(t, err)
	assert.Equal(t, []location.Entry{
		{Host: "trn001", Location: "spine0/leaf1", Line: 3},
		{Host: "trn002", Location: "spine0/leaf2", Line: 4},
		{Host: "i-0a1b2c3d4e5f60001", Location: "nn-1/nn-2/nn-3", Line: 5},
		{Host: "3", Location: "a:b/c.d/e_f/g-h", Line: 7},
	}, entries)

	entries, err = location.ReadLocations(strings.NewReader(""))
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestReadLocationsMalformed(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"one field", "trn001 a\ntrn002\n", "input:2:7: HOST LOCATION expected: a location after the host"},
		{"three fields", "trn001 a b\n", `input:1:10: "b" after HOST LOCATION; a line holds two fields`},
		{"bad host", "trn@1 a\n", `input:1:1: host name "trn@1" has "@" at byte 4`},
		{"long host", strings.Repeat("h", 256) + " a\n", "input:1:1: host name \"hhhh"},
		{"bad location", "  trn001 a//b\n", `input:1:10: not a location: "a//b": name 2 has 0 bytes; 1 to 64`},
		{"nine names", "trn001 1/2/3/4/5/6/7/8/9\n", `input:1:8: not a location: "1/2/3/4/5/6/7/8/9" has 9 names; at most 8`},
		{"control byte", "trn001 a\x00b\n", `input:1:8: not a location: "a\x00b": name 1 has "\x00" at byte 2`},
		{"a lone CR", "trn001 a\rb\n", `input:1:8: not a location: "a\rb"`},
		{"again", "trn001 a\n# x\nTRN001.ec2.internal b\n", `input:3:1: host "TRN001.ec2.internal" again; first on line 1`},
		{"long line", "trn001 " + strings.Repeat("a", 64<<10) + "\n", "input:1: the line has more than the 64 KiB a line may have"},
		{"long last line", "# x\n" + strings.Repeat("#", 64<<10+1), "input:2: the line has more than the 64 KiB a line may have"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := location.ReadLocations(strings.NewReader(c.text))
			require.Error(t, err)
			var le *location.Error
			require.ErrorAs(t, err, &le)
			assert.True(t, strings.HasPrefix(err.Error(), c.want), "got  %s\nwant %s", err, c.want)
		})
	}
	// A line of exactly MaxLine bytes is one line.
	_, err := location.ReadLocations(strings.NewReader(strings.Repeat("#", location.MaxLine) + "\r\n"))
	require.NoError(t, err)
}

// comments is an endless reader of comment lines of 100 bytes.
type comments struct{ off int64 }

func (c *comments) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
		if c.off%100 == 99 {
			p[i] = '\n'
		}
		c.off++
	}
	return len(p), nil
}

func TestReadLocationsStopsAt64MiB(t *testing.T) {
	_, err := location.ReadLocations(&comments{})
	assert.EqualError(t, err, "input:671089: the file has more than the 64 MiB a file may have")
	_, err = location.ReadLocations(io.LimitReader(&comments{}, 64<<20))
	assert.NoError(t, err)
}

func TestReadLocationsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "locations")
	require.NoError(t, os.WriteFile(path, []byte("trn001 a/b\ntrn002\n"), 0o644))
	_, err := location.ReadLocationsFile(path)
	assert.EqualError(t, err, path+":2:7: HOST LOCATION expected: a location after the host")

	_, err = location.ReadLocationsFile(filepath.Join(dir, "none"))
	assert.EqualError(t, err, filepath.Join(dir, "none")+": no such file")
	_, err = location.ReadLocationsFile(dir)
	assert.EqualError(t, err, dir+": is a directory, not a regular file")

	odd := filepath.Join(dir, "odd\nname")
	require.NoError(t, os.WriteFile(odd, []byte("x"), 0o644))
	_, err = location.ReadLocationsFile(odd)
	assert.EqualError(t, err, `"`+dir+`/odd\nname":1:2: HOST LOCATION expected: a location after the host`)
}

func TestReadFileRefusesOver64MiB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(65<<20)) // sparse: no 65 MiB written
	require.NoError(t, f.Close())
	_, err = location.ReadFile(path)
	assert.EqualError(t, err, path+": has 68157440 bytes, more than the 64 MiB a file may have")
}

func TestReadInstanceID(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o444))
		return path
	}
	id, err := location.ReadInstanceID(write("tag", "i-0a1b2c3d4e5f60001\n"))
	require.NoError(t, err)
	assert.Equal(t, "i-0a1b2c3d4e5f60001", id)
	id, err = location.ReadInstanceID(write("short", "i-0123abcd"))
	require.NoError(t, err)
	assert.Equal(t, "i-0123abcd", id)

	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "none"), "no such file: not an EC2 Nitro instance, or /sys is not mounted; pass this instance's id with --instance"},
		{write("xen", "\n"), `holds "", not an EC2 instance id (i- and 8 or 17 hex digits): not a Nitro instance?; pass this instance's id with --instance`},
		{write("upper", "i-0A1B2C3D4E5F60001\n"), `holds "i-0A1B2C3D4E5F60001", not an EC2 instance id`},
		{write("big", strings.Repeat("i", 5000)), "has more than 4096 bytes; pass this instance's id with --instance"},
		{dir, "not a regular file; pass this instance's id with --instance"},
	} {
		_, err := location.ReadInstanceID(c.path)
		require.Error(t, err, c.path)
		assert.Contains(t, err.Error(), c.want)
		assert.True(t, strings.HasPrefix(err.Error(), c.path+": "), err.Error())
	}
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(filepath.Join(dir, "tag"), link))
	_, err = location.ReadInstanceID(link)
	assert.EqualError(t, err, link+": is a symbolic link, not a regular file; pass this instance's id with --instance")
}

func TestKey(t *testing.T) {
	assert.Equal(t, "trn001", location.Key("TRN001.ec2.internal"))
	assert.Equal(t, "trn001", location.Key("trn001"))
	assert.Equal(t, "", location.Key(".x"))
	assert.Equal(t, "i-0abc", location.Key("I-0ABC"))
	// An IP address is compared whole: hostfiles of addresses are common.
	assert.Equal(t, "10.0.0.5", location.Key("10.0.0.5"))
	assert.NotEqual(t, location.Key("10.0.0.5"), location.Key("10.0.0.6"))
	assert.Equal(t, "fe80::1", location.Key("FE80:0::1"))
}

// Locate matches names by Key: case and the domain after the first dot do
// not matter; a name without an entry is "" and listed.
func TestLocate(t *testing.T) {
	entries := []location.Entry{{Host: "trn001", Location: "s/a"}, {Host: "TRN002.ec2.internal", Location: "s/b"}}
	locs, missing := location.Locate([]string{"Trn002", "trn003", "trn001.cluster"}, entries)
	assert.Equal(t, []string{"s/b", "", "s/a"}, locs)
	assert.Equal(t, []int{1}, missing)
}
