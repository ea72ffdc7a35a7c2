package headercheck

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/layout"
)

// root is the repository root, relative to this package.
var root = filepath.Join("..", "..")

// generated lists the files `make generate` writes.
var generated = []string{"abi/ztypes.go", "internal/headercheck/ztypes.go"}

// Each generated file is what the command on its first line prints now,
// from the header as it is: an edit to include/nccom_ring.h (or to an
// input) without `make generate` fails here.
func TestGeneratedFilesAreFresh(t *testing.T) {
	for _, name := range generated {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join(root, name))
			if err != nil {
				t.Fatal(err)
			}
			line, _, _ := bytes.Cut(want, []byte("\n"))
			command, _ := strings.CutPrefix(string(line), "// ")
			args := strings.Fields(command)
			if len(args) != 4 || args[0] != "go" || args[1] != "run" || args[2] != "./internal/mkgodefs" {
				t.Fatalf("%s: line 1 is not the command that generates it (go run ./internal/mkgodefs INPUT): %q", name, line)
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Dir = root
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v\n%s", command, err, stderr.Bytes())
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale: `%s` gives another file now (%s); run `make generate` and commit the result",
					name, command, firstDifference(want, got))
			}
		})
	}
}

// firstDifference names the first line where the checked-in file and the
// generator's output differ.
func firstDifference(file, now []byte) string {
	a, b := strings.Split(string(file), "\n"), strings.Split(string(now), "\n")
	line := func(l []string, i int) string {
		if i < len(l) {
			return strings.TrimSpace(l[i])
		}
		return "(end of file)"
	}
	for i := 0; i < len(a) || i < len(b); i++ {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return fmt.Sprintf("line %d: checked in %q, now %q", i+1, line(a, i), line(b, i))
		}
	}
	return "no line differs"
}

// mirrors maps the C struct tags of package layout to abi's Go mirrors.
var mirrors = map[string]reflect.Type{
	"ncclRing":       reflect.TypeFor[abi.Ring](),
	"ncclChannel":    reflect.TypeFor[abi.Channel](),
	"ncclTopoRanks":  reflect.TypeFor[abi.TopoRanks](),
	"ncclTopoGraph":  reflect.TypeFor[abi.TopoGraph](),
	"ncclTopoSystem": reflect.TypeFor[abi.TopoSystem](),
	"ncclComm":       reflect.TypeFor[abi.Comm](),
}

// goName is the Go mirrors' name for a C member: godefs's (the first letter
// upper-cased), but for internal/mkgodefs's renames and the one field of
// the hand-kept TopoSystem.
func goName(c string) string {
	switch c {
	case "id":
		return "ID"
	case "crossracktorack":
		return "CrossRackToRack"
	case "nodes[0].count":
		return "Nodes0Count"
	}
	return strings.ToUpper(c[:1]) + c[1:]
}

// Every row of the layout table is a field of abi's Go mirror at the same
// offset with the same size, and every struct size row is the mirror's
// size. For the generated mirrors this ties the table to the header.
func TestMirrorsMatchLayoutTable(t *testing.T) {
	for _, f := range layout.Fields {
		typ, ok := mirrors[f.Struct]
		if !ok {
			t.Errorf("no Go mirror for %s", f.Struct)
			continue
		}
		field, ok := typ.FieldByName(goName(f.Name))
		if !ok {
			t.Errorf("%v has no field for %s.%s", typ, f.Struct, f.Name)
			continue
		}
		if int(field.Offset) != f.Offset || int(field.Type.Size()) != f.Size {
			t.Errorf("%s.%s: Go mirror +%d (%d B), layout table +%d (%d B)",
				f.Struct, f.Name, field.Offset, field.Type.Size(), f.Offset, f.Size)
		}
	}
	for _, s := range layout.Structs {
		if got := int(mirrors[s.Name].Size()); got != s.Size {
			t.Errorf("sizeof %s: Go mirror %d, layout table %d", s.Name, got, s.Size)
		}
	}
}

// notDocumented matches the header's members that are not the ring stage's
// (opaque runtime state, padding), which have no row in the layout table.
var notDocumented = regexp.MustCompile(`^(Opaque|Pad[0-9]+|_)$`)

// Every member the header declares (but padding) has a row in the layout
// table: in the generated mirrors, and in the header's view of the structs
// abi keeps by hand.
func TestHeaderMembersAreInLayoutTable(t *testing.T) {
	rows := map[string]bool{}
	for _, f := range layout.Fields {
		rows[f.Struct+"."+goName(f.Name)] = true
	}
	header := map[string]reflect.Type{
		"ncclRing":      reflect.TypeFor[abi.Ring](),
		"ncclChannel":   reflect.TypeFor[abi.Channel](),
		"ncclTopoRanks": reflect.TypeFor[abi.TopoRanks](),
		"ncclTopoGraph": reflect.TypeFor[abi.TopoGraph](),
		"ncclComm":      reflect.TypeFor[Comm](),
	}
	for st, typ := range header {
		for i := range typ.NumField() {
			name := typ.Field(i).Name
			if !notDocumented.MatchString(name) && !rows[st+"."+name] {
				t.Errorf("%s.%s: in the header, missing from the layout table", st, name)
			}
		}
	}
	if n := reflect.TypeFor[TopoSystem]().NumField(); n != 1 || reflect.TypeFor[TopoNodeSet]().NumField() != 1 {
		t.Errorf("the header's ncclTopoSystem has more than nodes[0].count; the layout table has only that")
	}
}

// The hand-kept mirrors are laid out as the header lays out the same
// structs: abi.Comm has every member of the header's ncclComm (but
// padding) at the same offset with the same size, nothing else, and the
// same sizeof; abi.TopoSystem's one field is nodes[0].count.
func TestHandMirrorsMatchHeader(t *testing.T) {
	hand, header := reflect.TypeFor[abi.Comm](), reflect.TypeFor[Comm]()
	for i := range header.NumField() {
		h := header.Field(i)
		if notDocumented.MatchString(h.Name) {
			continue
		}
		g, ok := hand.FieldByName(h.Name)
		switch {
		case !ok:
			t.Errorf("ncclComm.%s: in the header, not in abi.Comm", h.Name)
		case g.Offset != h.Offset || g.Type.Size() != h.Type.Size():
			t.Errorf("ncclComm.%s: abi.Comm +%d (%d B), header +%d (%d B)", h.Name, g.Offset, g.Type.Size(), h.Offset, h.Type.Size())
		}
	}
	for i := range hand.NumField() {
		if name := hand.Field(i).Name; name != "_" {
			if _, ok := header.FieldByName(name); !ok {
				t.Errorf("abi.Comm.%s: not in the header's ncclComm", name)
			}
		}
	}
	if hand.Size() != header.Size() {
		t.Errorf("sizeof ncclComm: abi.Comm %d, header %d", hand.Size(), header.Size())
	}

	var sys TopoSystem
	offset := unsafe.Offsetof(sys.Nodes) + unsafe.Offsetof(sys.Nodes[0].Count)
	if got := unsafe.Offsetof(abi.TopoSystem{}.Nodes0Count); got != offset {
		t.Errorf("ncclTopoSystem nodes[0].count: abi.TopoSystem +%d, header +%d", got, offset)
	}
}

// The header's constants are package layout's.
func TestConstantsMatchLayout(t *testing.T) {
	for _, c := range []struct {
		name           string
		header, layout int
	}{
		{"MAXCHANNELS", MaxChannels, layout.MaxChannels},
		{"NCCL_TOPO_MAX_NODES", MaxLocalRanks, layout.MaxLocalRanks},
		{"MAX_KANGA_PATHS", MaxKangaPaths, layout.MaxKangaPaths},
		{"NCCL_TOPO_PATTERN_RING", PatternRing, layout.PatternRing},
		{"NCCOM_RING_MAX_INTRA", MaxIntra, layout.MaxIntra},
		{"NCCOM_RING_MAX_INTER", MaxInter, layout.MaxInter},
		{"NCCOM_RING_KANGA_WIDTH", KangaRingWidth, layout.KangaRingWidth},
	} {
		if c.header != c.layout {
			t.Errorf("%s: header %d, layout %d", c.name, c.header, c.layout)
		}
	}
}
