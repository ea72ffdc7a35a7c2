package ringdump

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sample() *Dump {
	return &Dump{
		Rank: 1, NRanks: 2, ResultName: "ncclSuccess",
		Wiring: &Wiring{
			NNodes: 1, Node: 0, NodesFirstRank: []int{0}, GraphChannels: 1, NChannels: 2,
			Channels: []Channel{{0, 0, 0, []int{1, 0}}, {1, 0, 0, []int{1, 0}}},
		},
		Version: "0.9.0", Host: "ip-10-0-0-1.ec2.internal", PID: 77,
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	d := sample()
	path, err := Write(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "rank-000001.ip-10-0-0-1_ec2_internal.77.json"); path != want {
		t.Fatalf("path %s, want %s", path, want)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != FormatVersion || got.Wiring == nil || got.NChannels != 2 || got.Channels[1].UserRanks[0] != 1 || got.Host != d.Host {
		t.Fatalf("read back %+v", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("%d entries in %s, want only the dump (no temporary file)", len(entries), dir)
	}
}

func TestFailedDumpHasNoWiringFields(t *testing.T) {
	dir := t.TempDir()
	d := &Dump{Rank: 3, NRanks: 4, Result: 4, ResultName: "ncclInvalidArgument", Warn: "ncclTopoPostset: x", Host: "h", PID: 1}
	path, err := Write(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, field := range []string{`"channels"`, `"nNodes"`, `"node"`, `"netDevs"`} {
		if strings.Contains(string(data), field) {
			t.Errorf("failed dump has %s: %s", field, data)
		}
	}
	got, err := Read(path)
	if err != nil || got.Wiring != nil || got.Warn != d.Warn {
		t.Fatalf("read back %+v, %v", got, err)
	}
}

// The WARN text is stored as the log prints it, so that grepping a dump for
// the log's words (comm->enablePod, <rank>) finds them.
func TestWarnIsWrittenWithoutHTMLEscapes(t *testing.T) {
	dir := t.TempDir()
	warn := "ncclTopoPostset: comm->enablePod is set on 2 nodes & rank <2> disagrees"
	d := &Dump{Rank: 0, NRanks: 2, Result: 5, ResultName: "ncclInvalidUsage", Warn: warn, Host: "h", PID: 1}
	path, err := Write(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"warn":"`+warn+`"`) {
		t.Errorf("dump does not hold the WARN text verbatim: %s", data)
	}
	if n := strings.Count(string(data), "\n"); n != 1 || !strings.HasSuffix(string(data), "}\n") {
		t.Errorf("dump is not one line ending in a newline: %q", data)
	}
}

func TestSetNetDevReplacesTheChannelsAnswer(t *testing.T) {
	d := sample()
	d.SetNetDev(1, 3)
	d.SetNetDev(0, 2)
	d.SetNetDev(1, 4)
	if len(d.NetDevs) != 2 || d.NetDevs[0] != (NetDev{1, 4}) || d.NetDevs[1] != (NetDev{0, 2}) {
		t.Fatalf("netDevs %+v", d.NetDevs)
	}
}

func TestFileNames(t *testing.T) {
	rank, host, pid, ok := ParseFileName(FileName(42, "a.b/c", 9))
	if !ok || rank != 42 || host != "a_b_c" || pid != 9 {
		t.Fatalf("got %d %q %d %v", rank, host, pid, ok)
	}
	for _, name := range []string{".rank-000001.h.1.json.tmp", "rank-x.h.1.json", "rank-1.h.json", "notes.txt"} {
		if _, _, _, ok := ParseFileName(name); ok {
			t.Errorf("%s parsed as a dump name", name)
		}
	}
}

func TestReadDirSortsAndReportsBadJSONWithOffset(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []int{1, 0} {
		d := sample()
		d.Rank = r
		if _, err := Write(dir, d); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "README"), []byte("not a dump"), 0o644)
	files, bad, err := ReadDir(dir)
	if err != nil || len(bad) != 0 || len(files) != 2 || files[0].Dump.Rank != 0 || files[1].Dump.Rank != 1 {
		t.Fatalf("ReadDir: %v, %v, %v", files, bad, err)
	}
	badPath := filepath.Join(dir, FileName(2, "h", 1))
	os.WriteFile(badPath, []byte(`{"format":1,"rank":2,`), 0o644)
	files, bad, err = ReadDir(dir)
	if err != nil || len(files) != 2 || len(bad) != 1 {
		t.Fatalf("ReadDir with one bad file: %d files, %v, %v; want the 2 good ones and the bad one", len(files), bad, err)
	}
	var fe *FormatError
	if !errors.As(bad[0], &fe) || fe.Path != badPath || fe.Offset != 21 {
		t.Fatalf("ReadDir on bad JSON: %v", bad[0])
	}
	if want := `"` + badPath + `": not a ring dump: at byte 21`; !strings.HasPrefix(bad[0].Error(), want) {
		t.Errorf("error %q does not start %q", bad[0], want)
	}
}
