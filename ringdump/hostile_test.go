package ringdump

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/nccomring/libnccomring/internal/fuzzseed"
)

// The two parts Encode returns, with the netDevs between them, are the
// file encoding/json makes of the whole dump.
func TestEncodePartsMakeTheWholeFile(t *testing.T) {
	for _, d := range []*Dump{sample(), {Rank: 3, NRanks: 4, Result: 4, ResultName: "ncclInvalidArgument", Warn: "x \"y\" <z>\n", Host: "h", PID: 1}} {
		for _, nds := range [][]NetDev{nil, {{0, 1}}, {{1, 3}, {0, -1}}} {
			d.NetDevs = nds
			head, tail, err := Encode(d)
			if err != nil {
				t.Fatal(err)
			}
			got := append(append(append([]byte{}, head...), AppendNetDevs(nil, nds)...), tail...)
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(d); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("parts give\n%s\nencoding/json gives\n%s", got, want.Bytes())
			}
		}
	}
}

func TestEncodeRefusesADumpLargerThanTheLimit(t *testing.T) {
	d := sample()
	d.NRanks = MaxFileSize / 16
	d.Channels = []Channel{{Channel: 0, UserRanks: make([]int, d.NRanks)}}
	_, _, err := Encode(d)
	var se *SizeError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "more than the 64 MiB a dump may take") {
		t.Fatalf("Encode of a %d-rank dump: %v", d.NRanks, err)
	}
}

// A link planted under the dump's name, or under the temporary name older
// versions used, is replaced or left alone: the file it points to is
// never written.
func TestWriteFollowsNoPlantedLink(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := sample()
	final := Path(dir, d)
	oldTmp := filepath.Join(dir, "."+filepath.Base(final)+".tmp")
	for _, link := range []string{final, oldTmp} {
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
	}
	path, err := Write(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("the link's target was written: %q", b)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("%s is %v (%v), want the dump as a regular file in the link's place", path, fi.Mode(), err)
	}
	if fi, err := os.Lstat(oldTmp); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link at the old temporary name was touched: %v, %v", fi, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d entries, want the dump and the planted link only (no temporary file)", len(entries))
	}
}

func TestOpenDirRefusesDirectoriesOthersCanWrite(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		dir  string
		want string // "" to accept
	}{
		{mk("private", 0o700), ""},
		{mk("shared-sticky", 0o777|os.ModeSticky), ""},
		{mk("group-sticky", 0o775|os.ModeSticky), ""},
		{mk("world", 0o777), "is writable by group or others without the sticky bit (mode 0777)"},
		{mk("group", 0o775), "is writable by group or others without the sticky bit (mode 0775)"},
	} {
		fd, err := OpenDir(c.dir)
		if fd >= 0 {
			syscall.Close(fd)
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.dir, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.dir, err, c.want)
		}
	}
	link := filepath.Join(base, "link")
	os.Symlink(filepath.Join(base, "private"), link)
	if _, err := OpenDir(link); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("a link to a good directory: %v", err)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := OpenDir(file); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a file: %v", err)
	}
	if _, err := Write(filepath.Join(base, "world"), sample()); err == nil {
		t.Error("Write into a world-writable directory succeeded")
	}
}

func TestOpenDirRefusesAnotherUsersDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	dir := filepath.Join(t.TempDir(), "theirs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := OpenDir(dir)
	if err == nil || !strings.Contains(err.Error(), "is owned by uid 65534, not by this process's effective uid 0") {
		t.Fatalf("another user's directory: %v", err)
	}
}

// A directory Write creates is 0755 whatever the umask (one that lets the
// group write would otherwise make OpenDir refuse it).
func TestCreatedDirectoryIsNotGroupWritable(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "new", "dumps")
	if _, err := Write(dir, sample()); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("%s: %v, %v; want 0755", dir, fi.Mode(), err)
	}
}

// Read opens regular files only, without following a link or waiting on a
// FIFO, and reads at most MaxFileSize bytes.
func TestReadRefusesWhatIsNotARegularFileOfDumpSize(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", zero)
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Truncate(big, MaxFileSize+1)
	for _, c := range []struct{ path, want string }{
		{fifo, "is a FIFO, not a regular file"},
		{zero, "is a symbolic link, not a regular file"},
		{"/dev/zero", "is a character device, not a regular file"},
		{dir, "is a directory, not a regular file"},
		{big, "is 67108865 bytes, more than the 64 MiB a dump may have"},
	} {
		// A Read that waited on the FIFO would never return: the watchdog
		// make test runs go test under ends it (its blocked limit, every
		// goroutine's stack from SIGQUIT), or go test's -timeout does.
		if _, err := Read(c.path); err == nil || err.Error() != `"`+c.path+`": `+c.want {
			t.Errorf("Read(%s): %v, want %q", c.path, err, c.want)
		}
	}
}

// FuzzDecode: no input crashes or hangs the reader, and what it accepts
// encodes (Encode's parts) into a file that reads back the same.
func FuzzDecode(f *testing.F) {
	d := sample()
	d.SetNetDev(0, 1)
	head, tail, _ := Encode(d)
	c := fuzzseed.New(f)
	c.Add(append(append(head, AppendNetDevs(nil, d.NetDevs)...), tail...))
	c.Add([]byte(`{"format":1,"rank":0,"nRanks":2147483647,"result":0,"resultName":"ncclSuccess","version":"x","host":"h","pid":1}`))
	c.Add([]byte(`{"format":1,"rank":0,"nRanks":1,"result":5,"resultName":"x","warn":"\u001b[2J\u001b[Hevery rank agrees","host":"\n","pid":1}`))
	c.Fuzz(func(t *testing.T, data []byte) {
		d, err := Decode("fuzz.json", data)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			return
		}
		head, tail, err := Encode(d)
		if err != nil {
			var se *SizeError
			if !errors.As(err, &se) {
				t.Fatalf("Encode: %v", err)
			}
			return
		}
		file := append(append(append([]byte{}, head...), AppendNetDevs(nil, d.NetDevs)...), tail...)
		back, err := Decode("again.json", file)
		if err != nil {
			t.Fatalf("a dump Decode accepted does not read back: %v\n%s", err, file)
		}
		if !reflect.DeepEqual(normal(d), normal(back)) {
			t.Fatalf("read back %+v, want %+v", back, d)
		}
	})
}

// normal makes empty and nil slices alike (omitempty drops an empty
// netDevs; an empty list reads back as an empty one).
func normal(d *Dump) Dump {
	n := *d
	if len(n.NetDevs) == 0 {
		n.NetDevs = nil
	}
	return n
}

// The largest dump Encode writes decodes: one rank a node (a node list and
// an order sequence as long as the ranks), two channels, as many ranks as
// MaxFileSize allows (sizeBound). Its values stay under MaxValues, so the
// bound refuses no dump the library writes.
func TestDecodeTakesTheLargestDumpEncodeWrites(t *testing.T) {
	largest := func(n int) *Dump {
		d := &Dump{Rank: 0, NRanks: n, ResultName: "ncclSuccess", Version: "x", Host: "h", PID: 1,
			Wiring: &Wiring{NNodes: n, NodesFirstRank: make([]int, n), GraphChannels: 1, NChannels: 2,
				Order: &Order{Asked: "network", FromRecord: true, Network: true, Sequence: make([]int, n)}}}
		for c := range 2 {
			d.Channels = append(d.Channels, Channel{Channel: c, UserRanks: make([]int, n)})
		}
		return d
	}
	n := (MaxFileSize - 512 - 128 - 6*len("ncclSuccessxh")) / 63 // sizeBound: 21 a node head, 2x(64 + 21 a rank)
	if _, _, err := Encode(largest(n + 1)); err == nil {
		t.Fatalf("Encode wrote %d ranks a node: the test's dump is not the largest", n+1)
	}
	head, tail, err := Encode(largest(n))
	if err != nil {
		t.Fatal(err)
	}
	data := append(head, tail...)
	got, err := Decode("f", data)
	if err != nil {
		t.Fatalf("%d ranks (%d values): %v", n, countValues(data, MaxValues), err)
	}
	if len(got.Channels) != 2 || len(got.Channels[1].UserRanks) != n || len(got.Order.Sequence) != n {
		t.Errorf("decoded %d channels", len(got.Channels))
	}
}

// A file of more values than a dump holds (issue 34: "0," 32 million times
// in 64 MiB decoded to 256 MiB of ints) is refused before it is decoded;
// commas inside strings are not values; one value fewer is decoded.
func TestDecodeRefusesMoreValuesThanADumpHolds(t *testing.T) {
	file := func(values int, warn string) []byte {
		var b bytes.Buffer
		b.WriteString(`{"format":1,"rank":0,"nRanks":2,"result":3,"resultName":"x","warn":` + warn + `,"nodesFirstRank":[0`)
		for ; values > 0; values-- {
			b.WriteString(",0")
		}
		b.WriteString(`],"version":"x","host":"h","pid":1}`)
		return b.Bytes()
	}
	// The object's commas: 9 of its members, so the array holds
	// MaxValues-9 more values than its first.
	over := file(MaxValues-8, `"a,b,\",c"`)
	if n := countValues(over, MaxValues); n != MaxValues+1 {
		t.Fatalf("counted %d values, want %d", n, MaxValues+1)
	}
	_, err := Decode("f", over)
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), `"f": not a ring dump: holds more than 5592405 values`) {
		t.Fatalf("got %v", err)
	}
	d, err := Decode("f", file(MaxValues-9, `"a,b,\",c"`))
	if err != nil || len(d.NodesFirstRank) != MaxValues-8 || d.Warn != `a,b,",c` {
		t.Fatalf("one value fewer: %v", err)
	}
}
