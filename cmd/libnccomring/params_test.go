package main

import (
	"testing"

	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/ring"
)

// The registry (params.go) and env.c's table, where C reads the variables,
// name the same variables: each row of the registry is env.c's row of its
// id, with the same name and, when path-valued, the path attribute; env.c's
// other rows are the variables C parses itself.
func TestRegistryMatchesEnvTable(t *testing.T) {
	readInC := map[string]bool{"NCCL_DEBUG": true, "NCCL_DEBUG_SUBSYS": true, "NCCL_DEBUG_FILE": true, "NCCOM_RING_LOG_STYLE": true, "NCCOMRING_LIBRARY": true}
	byID := map[int]*spec{}
	for _, v := range registry {
		s := v.row()
		if other, ok := byID[int(s.id)]; ok {
			t.Errorf("%s and %s share env.c's row %d", s.name, other.name, s.id)
		}
		byID[int(s.id)] = s
		name, path, ok := envTableRow(int(s.id))
		if !ok || name != s.name {
			t.Errorf("%s: env.c's row %d is %q (%v)", s.name, s.id, name, ok)
		}
		if path != (s.kind == pathValue) {
			t.Errorf("%s: env.c says path-valued %v, the registry %v", s.name, path, s.kind == pathValue)
		}
	}
	n := 0
	for id := 0; ; id++ {
		name, path, ok := envTableRow(id)
		if !ok {
			break
		}
		n++
		if byID[id] == nil && !readInC[name] {
			t.Errorf("env.c's row %d, %s, is neither in the registry nor read in C", id, name)
		}
		if readInC[name] && path != (name == "NCCL_DEBUG_FILE" || name == "NCCOMRING_LIBRARY") {
			t.Errorf("%s: path-valued %v", name, path)
		}
	}
	if n != len(registry)+len(readInC) {
		t.Errorf("env.c has %d rows, want %d", n, len(registry)+len(readInC))
	}
}

// Each row's documented default and read time (docs/environment.md).
func TestRegistryRows(t *testing.T) {
	want := []spec{
		{name: "NCCOM_RING_PLATFORM", kind: wordValue, def: "generic", when: atFirstUse},
		{name: "NCCOM_RING_POD_ORDER", kind: wordValue, def: "pods refused", when: atFirstUse},
		{name: "NCCOM_RING_LAYOUT", kind: pathValue, def: "D3's offsets", when: atFirstUse},
		{name: "NCCOM_RING_ABI_CHECK", kind: wordValue, def: "enforce", when: atFirstUse},
		{name: "NCCOM_RING_GOMAXPROCS", kind: integerValue, def: "2", when: atLoad},
		{name: "NCCOM_RING_DUMP", kind: pathValue, def: "no dumps", when: atEveryCall},
		{name: "NCCOM_RING_NODE_ORDER", kind: wordValue, def: "rank", when: atEveryCall},
		{name: "NCCOM_RING_LOCATION", kind: wordValue, def: "no location", when: atEveryCall},
	}
	if len(registry) != len(want) {
		t.Fatalf("%d rows, want %d", len(registry), len(want))
	}
	for i, v := range registry {
		got := *v.row()
		got.id = 0
		if got != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, got, want[i])
		}
	}
}

type parseCase[T comparable] struct {
	value string // "" is unset
	want  T
	warn  string // the error's text, "" for none
}

// checkParse runs p's parser on each case: the value it gives and, for a
// value it does not take as given, the exact WARN text.
func checkParse[T comparable](t *testing.T, p *param[T], cases []parseCase[T]) {
	t.Helper()
	for _, c := range cases {
		got, err := p.parse(c.value, c.value != "")
		text := ""
		if err != nil {
			text = err.Error()
		}
		if got != c.want || text != c.warn {
			t.Errorf("%s=%q: %v, %q; want %v, %q", p.name, c.value, got, text, c.want, c.warn)
		}
	}
}

func TestRegistryParsers(t *testing.T) {
	checkParse(t, platformParam, []parseCase[kanga.Platform]{
		{"", kanga.Generic, ""},
		{"generic", kanga.Generic, ""},
		{"Generic", kanga.Generic, ""},
		{"trn3-switchv1", kanga.SwitchV1, ""},
		{"TRN3-SwitchV1", kanga.SwitchV1, ""},
		{"trn9", kanga.Generic, "NCCOM_RING_PLATFORM=\"trn9\" is not one of generic, trn3-switchv1"},
	})
	checkParse(t, podOrderParam, []parseCase[ring.PodOrder]{
		{"", ring.PodOrderRefuse, ""},
		{"node", ring.PodOrderNode, ""},
		{"NODE", ring.PodOrderNode, ""},
		{"rank", ring.PodOrderRefuse, "NCCOM_RING_POD_ORDER=\"rank\" is not 'node'; pods are refused"},
	})
	checkParse(t, layoutParam, []parseCase[string]{
		{"", "", ""},
		{"/etc/nccom/layout.json", "/etc/nccom/layout.json", ""},
		{"layout.json", "layout.json", ""},
	})
	checkParse(t, abiCheckParam, []parseCase[abiCheckMode]{
		{"", abiEnforce, ""},
		{"enforce", abiEnforce, ""},
		{"Warn", abiWarn, ""},
		{"OFF", abiOff, ""},
		{"Bogus", abiEnforce, "NCCOM_RING_ABI_CHECK=\"Bogus\" is not one of enforce, warn, off; enforcing"},
	})
	checkParse(t, procsParam, []parseCase[int]{
		{"", 2, ""},
		{"1", 1, ""},
		{"3", 3, ""},
		{"64", 64, ""},
		{"65", 64, "NCCOM_RING_GOMAXPROCS=\"65\" is more than 64; using 64"},
		{"1000", 64, "NCCOM_RING_GOMAXPROCS=\"1000\" is more than 64; using 64"},
		{"99999999999999999999", 64, "NCCOM_RING_GOMAXPROCS=\"99999999999999999999\" is more than 64; using 64"},
		{"0", 2, `NCCOM_RING_GOMAXPROCS="0" is not a positive integer; using 2`},
		{"-3", 2, `NCCOM_RING_GOMAXPROCS="-3" is not a positive integer; using 2`},
		{"-99999999999999999999", 2, `NCCOM_RING_GOMAXPROCS="-99999999999999999999" is not a positive integer; using 2`},
		{"abc", 2, `NCCOM_RING_GOMAXPROCS="abc" is not a positive integer; using 2`},
		{"2 ", 2, `NCCOM_RING_GOMAXPROCS="2 " is not a positive integer; using 2`},
		// Quoted: a newline or an escape in a value cannot forge a log line.
		{"2\nh:1:1 [0] NCCL WARN forged\x1b[2J", 2, `NCCOM_RING_GOMAXPROCS="2\nh:1:1 [0] NCCL WARN forged\x1b[2J" is not a positive integer; using 2`},
	})
	checkParse(t, dumpParam, []parseCase[string]{
		{"", "", ""},
		{"/shared/rings/job42", "/shared/rings/job42", ""},
	})
	checkParse(t, nodeOrderParam, []parseCase[bool]{
		{"", false, ""},
		{"rank", false, ""},
		{"Network", true, ""},
		{"network", true, ""},
		{"net\nNCCL WARN x", false, `NCCOM_RING_NODE_ORDER="net\nNCCL WARN x" is not rank or network; stitching this rank's nodes in rank order`},
		{"caf\u00e9", false, `NCCOM_RING_NODE_ORDER="caf\xc3\xa9" is not rank or network; stitching this rank's nodes in rank order`},
	})
	leafA, err := nodeorder.Parse("spine0/leafA")
	if err != nil {
		t.Fatal(err)
	}
	checkParse(t, locationParam, []parseCase[nodeorder.Location]{
		{"", nodeorder.Location{}, ""},
		{"spine0/leafA", leafA, ""},
		{"spine0//leafA", nodeorder.Location{}, `NCCOM_RING_LOCATION="spine0//leafA": name 2 has 0 bytes; 1 to 64; this rank has no location`},
	})
}

// A variable read once keeps its first reading; one read at every call
// follows C's environment (t.Setenv reaches it: the test binary is linked
// with cgo), parsing again only when the value changed, without
// allocating when it did not.
func TestRegistryReadTimes(t *testing.T) {
	once := &param[abiCheckMode]{spec: abiCheckParam.spec, parse: abiCheckParam.parse}
	t.Setenv(ABICheckEnvVar, "Bogus")
	r, fresh := once.get()
	if !fresh || r.value != abiEnforce || r.err == nil || r.raw != "Bogus" {
		t.Fatalf("first read: %+v, fresh %v", r, fresh)
	}
	t.Setenv(ABICheckEnvVar, "off")
	if again, fresh := once.get(); again != r || fresh {
		t.Errorf("read once, then %+v, fresh %v", again, fresh)
	}
	if raw, set := once.seen(); raw != "Bogus" || !set {
		t.Errorf("seen %q %v, want the value read", raw, set)
	}

	every := &param[string]{spec: dumpParam.spec, parse: dumpParam.parse}
	for _, step := range []struct {
		value string // "" unsets it
		fresh bool
	}{{"/a", true}, {"/a", false}, {"/ab", true}, {"/a", true}, {"", true}, {"", false}, {"/a", true}} {
		if step.value == "" {
			t.Setenv(DumpEnvVar, "") // empty is unset (P20)
		} else {
			t.Setenv(DumpEnvVar, step.value)
		}
		r, fresh := every.get()
		if r.value != step.value || r.set != (step.value != "") || fresh != step.fresh {
			t.Errorf("%s=%q: %+v, fresh %v; want fresh %v", DumpEnvVar, step.value, r, fresh, step.fresh)
		}
	}
	if n := testing.AllocsPerRun(100, func() { every.get() }); n != 0 {
		t.Errorf("a read at every call of an unchanged value allocates %v times", n)
	}
}

// The ENV line: the variables in the registry's order, NAME=VALUE when set,
// else their defaults; a variable already read shows what was read.
func TestVariablesLine(t *testing.T) {
	t.Setenv(kanga.EnvVar, "trn3-switchv1")
	t.Setenv(ring.PodOrderEnvVar, "")
	t.Setenv(LayoutEnvVar, "")
	t.Setenv(ABICheckEnvVar, "")
	t.Setenv(DumpEnvVar, "/shared/rings/job42")
	t.Setenv(NodeOrderEnvVar, "network")
	t.Setenv(LocationEnvVar, "")
	procs := "NCCOM_RING_GOMAXPROCS unset (2)" // read at load, from the test's own environment
	if raw, set := procsParam.seen(); set {
		procs = "NCCOM_RING_GOMAXPROCS=" + quote.String(raw)
	}
	want := `libnccomring environment: NCCOM_RING_PLATFORM="trn3-switchv1", NCCOM_RING_POD_ORDER unset (pods refused), ` +
		`NCCOM_RING_LAYOUT unset (D3's offsets), NCCOM_RING_ABI_CHECK unset (enforce), ` + procs + `, NCCOM_RING_DUMP="/shared/rings/job42", ` +
		`NCCOM_RING_NODE_ORDER="network", NCCOM_RING_LOCATION unset (no location)`
	if got := variablesLine(); got != want {
		t.Errorf("\n got  %s\n want %s", got, want)
	}
}
