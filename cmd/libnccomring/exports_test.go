package main

// This test uses only the standard library.

import (
	"debug/elf"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The dynamic symbol table of build/libnccomring.so holds the four entry
// points, under their C names and their C++ mangled names (issue 3, C++
// hosts: aliases in shim.c), and nothing of the Go runtime (issue 2, item 5).
// make test sets LIBNCCOMRING to the built library.
func TestLibraryExportsOnlyTheRingStage(t *testing.T) {
	path := os.Getenv("LIBNCCOMRING")
	if path == "" {
		t.Skip("LIBNCCOMRING is not set; make test sets it to build/libnccomring.so")
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var defined []string
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_BIND(s.Info) != elf.STB_LOCAL && s.Name != "" {
			defined = append(defined, s.Name)
		}
	}
	sort.Strings(defined)
	want := []string{
		"_Z14ncclBuildRingsiPiiiS_S_",                                  // ncclBuildRings(int, int*, int, int, int*, int*)
		"_Z14ncclTopoPresetP8ncclCommP13ncclTopoGraphP13ncclTopoRanks", // ncclTopoPreset(ncclComm*, ncclTopoGraph*, ncclTopoRanks*)
		"_Z15ncclTopoPostsetP8ncclCommPiPP13ncclTopoRanksS1_S1_",       // ncclTopoPostset(ncclComm*, int*, ncclTopoRanks**, int*, int*)
		"_Z17ncclTopoGetNetDevP14ncclTopoSystemiP13ncclTopoGraphiPi",   // ncclTopoGetNetDev(ncclTopoSystem*, int, ncclTopoGraph*, int, int*)
		"ncclBuildRings", "ncclTopoGetNetDev", "ncclTopoPostset", "ncclTopoPreset",
		// The preload shim's entry points (entry.h, issue 9).
		"nccomring_build_rings_from", "nccomring_topo_get_net_dev_from", "nccomring_topo_postset_from", "nccomring_topo_preset_from",
		"nccomring_version", // the library's version (include/nccom_ring.h, issue 10)
	}
	if !slices.Equal(want, defined) {
		t.Errorf("exported symbols\n  got  %v\n  want %v", defined, want)
	}
	// Each mangled name is an alias: the same address as its C entry point.
	addr := map[string]uint64{}
	for _, s := range syms {
		addr[s.Name] = s.Value
	}
	for mangled, c := range map[string]string{
		"_Z14ncclBuildRingsiPiiiS_S_":                                  "ncclBuildRings",
		"_Z14ncclTopoPresetP8ncclCommP13ncclTopoGraphP13ncclTopoRanks": "ncclTopoPreset",
		"_Z15ncclTopoPostsetP8ncclCommPiPP13ncclTopoRanksS1_S1_":       "ncclTopoPostset",
		"_Z17ncclTopoGetNetDevP14ncclTopoSystemiP13ncclTopoGraphiPi":   "ncclTopoGetNetDev",
	} {
		if addr[c] != addr[mangled] {
			t.Errorf("%s is not an alias of %s", mangled, c)
		}
	}
	for _, name := range defined {
		if strings.HasPrefix(name, "_cgo") || strings.HasPrefix(name, "x_cgo") || name == "crosscall2" || name == "fatalf" {
			t.Errorf("Go runtime symbol %s exported", name)
		}
	}
	soname, err := f.DynString(elf.DT_SONAME)
	if err != nil || !slices.Equal(soname, []string{"libnccomring.so.0"}) {
		t.Errorf("SONAME %v (%v), want libnccomring.so.0", soname, err)
	}
}
