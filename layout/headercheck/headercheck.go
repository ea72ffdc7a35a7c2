// Package headercheck cross-checks the public C header against package
// layout (and so, through abi's compile-time asserts, the Go mirrors): its
// test compiles include/nccom_ring.h with cgo and compares every documented
// member, struct size, result code and constant. It is a test-only package:
// nothing in the shipped library imports it. `make` runs its test on every
// library build.
package headercheck

/*
#cgo CFLAGS: -I${SRCDIR}/../../include
#include <stddef.h>
#include "nccom_ring.h"

struct nccomring_member {
  const char *st, *name;
  size_t offset, size;
};

#define MEMBER(S, M) {#S, #M, offsetof(struct S, M), sizeof(((struct S *)0)->M)}

// Every member the header documents, with its offset and size as the C
// compiler lays it out.
static const struct nccomring_member nccomring_members[] = {
    MEMBER(ncclRing, prev), MEMBER(ncclRing, next), MEMBER(ncclRing, userRanks),
    MEMBER(ncclRing, devUserRanks),
    MEMBER(ncclChannel, ring),
    MEMBER(ncclTopoRanks, ringRecv), MEMBER(ncclTopoRanks, ringSend),
    MEMBER(ncclTopoRanks, ringPrev), MEMBER(ncclTopoRanks, ringNext),
    MEMBER(ncclTopoRanks, treeToParent), MEMBER(ncclTopoRanks, treeToChild0),
    MEMBER(ncclTopoRanks, treeToChild1), MEMBER(ncclTopoRanks, JbogKangaringPath),
    MEMBER(ncclTopoGraph, id), MEMBER(ncclTopoGraph, pattern), MEMBER(ncclTopoGraph, crossNic),
    MEMBER(ncclTopoGraph, collNet), MEMBER(ncclTopoGraph, minChannels),
    MEMBER(ncclTopoGraph, maxChannels), MEMBER(ncclTopoGraph, nChannels),
    MEMBER(ncclTopoGraph, speedIntra), MEMBER(ncclTopoGraph, speedInter),
    MEMBER(ncclTopoGraph, typeIntra), MEMBER(ncclTopoGraph, typeInter),
    MEMBER(ncclTopoGraph, sameChannels), MEMBER(ncclTopoGraph, nHops),
    MEMBER(ncclTopoGraph, intra), MEMBER(ncclTopoGraph, inter),
    MEMBER(ncclTopoGraph, crossracktorack),
    MEMBER(ncclTopoSystem, nodes[0].count),
    MEMBER(ncclComm, channels), MEMBER(ncclComm, nKangaRingChannels), MEMBER(ncclComm, kangaRing),
    MEMBER(ncclComm, nMlaInCycle), MEMBER(ncclComm, peerInfo), MEMBER(ncclComm, topo),
    MEMBER(ncclComm, rank), MEMBER(ncclComm, nRanks), MEMBER(ncclComm, node),
    MEMBER(ncclComm, nNodes), MEMBER(ncclComm, localRanks), MEMBER(ncclComm, nChannels),
    MEMBER(ncclComm, enablePod),
};

static int nccomring_n_members(void) {
  return (int)(sizeof nccomring_members / sizeof nccomring_members[0]);
}
static struct nccomring_member nccomring_member_at(int i) { return nccomring_members[i]; }

static size_t nccomring_sizeof(int i) {
  switch (i) {
  case 0: return sizeof(struct ncclRing);
  case 1: return sizeof(struct ncclChannel);
  case 2: return sizeof(struct ncclTopoRanks);
  case 3: return sizeof(struct ncclTopoGraph);
  case 4: return sizeof(struct ncclComm);
  }
  return 0;
}

static const int nccomring_results[] = {ncclSuccess, ncclUnhandledCudaError, ncclSystemError,
                                         ncclInternalError, ncclInvalidArgument, ncclInvalidUsage};
static const int nccomring_constants[] = {MAXCHANNELS, NCCL_TOPO_MAX_NODES, MAX_KANGA_PATHS,
                                           NCCL_TOPO_PATTERN_RING};
static int nccomring_result_at(int i) { return nccomring_results[i]; }
static int nccomring_constant_at(int i) { return nccomring_constants[i]; }
*/
import "C"

import (
	"fmt"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/layout"
)

// headerMember is one member of the public header as the C compiler lays it
// out.
type headerMember struct {
	Struct, Name string
	Offset, Size int
}

// headerMembers returns the members documented in include/nccom_ring.h.
func headerMembers() []headerMember {
	n := int(C.nccomring_n_members())
	out := make([]headerMember, 0, n)
	for i := range n {
		r := C.nccomring_member_at(C.int(i))
		out = append(out, headerMember{C.GoString(r.st), C.GoString(r.name), int(r.offset), int(r.size)})
	}
	return out
}

// layoutMismatches cross-checks the C header against package layout (and so,
// through abi's compile-time asserts, against the Go mirrors): every member,
// every struct size, the D1 result codes and the D2 constants. It returns one
// line per difference.
func layoutMismatches() []string {
	var bad []string
	header := map[string]headerMember{}
	for _, m := range headerMembers() {
		header[m.Struct+"."+m.Name] = m
	}
	for _, f := range layout.Fields {
		key := f.Struct + "." + f.Name
		m, ok := header[key]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: in the layout table, not checked against the header", key))
		case m.Offset != f.Offset || m.Size != f.Size:
			bad = append(bad, fmt.Sprintf("%s: header +%d (%d B), layout +%d (%d B)", key, m.Offset, m.Size, f.Offset, f.Size))
		}
		delete(header, key)
	}
	for key := range header {
		bad = append(bad, fmt.Sprintf("%s: in the header, missing from the layout table", key))
	}
	for i, s := range layout.Structs {
		if got := int(C.nccomring_sizeof(C.int(i))); got != s.Size {
			bad = append(bad, fmt.Sprintf("sizeof(struct %s): header %d, layout %d", s.Name, got, s.Size))
		}
	}
	results := []abi.Result{abi.Success, abi.UnhandledCudaError, abi.SystemError, abi.InternalError, abi.InvalidArgument, abi.InvalidUsage}
	for i, r := range results {
		if got := int(C.nccomring_result_at(C.int(i))); got != int(r) {
			bad = append(bad, fmt.Sprintf("%v: header %d, Go %d", r, got, int(r)))
		}
	}
	constants := []int{layout.MaxChannels, layout.MaxLocalRanks, layout.MaxKangaPaths, layout.PatternRing}
	for i, v := range constants {
		if got := int(C.nccomring_constant_at(C.int(i))); got != v {
			bad = append(bad, fmt.Sprintf("constant %d: header %d, layout %d", i, got, v))
		}
	}
	return bad
}
