// Package kanga is the fork's TRN3-SwitchV1 kangaRing stage (spec §2 and §4,
// D7, D13, D14): the platform gate, the lift of comm->kangaRing into this
// rank's fragment in Preset, and the materialize of every rank's fragment
// into comm->kangaRing in Postset. It copies; the search that produced the
// rotated paths belongs to the topology layer.
package kanga

import (
	"fmt"
	"strings"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/layout"
)

// Platform is what the ring stage needs to know about the machine (D14).
type Platform struct {
	SwitchV1        bool // neuronIsTrn3SwitchV1Family()
	VirtualCoreSize int32
	JbogID          int32 // neuronTrnSwitchV1JbogId(rank)
}

// Resolver answers the platform questions of one call (D14): IsSwitchV1
// (the neuronIsTrn3SwitchV1Family hook) first, by Preset and Postset;
// Preconditions (nec_get_virtual_core_size and neuronTrnSwitchV1JbogId)
// only in Preset (D27: they travel in the rank's record) and only when
// IsSwitchV1 said true, because real implementations of those hooks may
// assert on other platforms. The export layer resolves them from host hooks or
// NCCOM_RING_PLATFORM (P18); tests pass a Fixed one.
type Resolver interface {
	IsSwitchV1() (bool, error)
	Preconditions(rank int32) (virtualCoreSize, jbogID int32)
}

// Fixed is a Resolver that always answers the same platform.
type Fixed Platform

// IsSwitchV1 implements Resolver.
func (f Fixed) IsSwitchV1() (bool, error) { return f.SwitchV1, nil }

// Preconditions implements Resolver.
func (f Fixed) Preconditions(int32) (int32, int32) { return f.VirtualCoreSize, f.JbogID }

// EnvVar is the environment variable that names the platform when the host
// provides no hooks (D14).
const EnvVar = "NCCOM_RING_PLATFORM"

// UnknownPlatformError is an NCCOM_RING_PLATFORM value that names no
// platform. Its text is the WARN text without the function prefix
// (docs/errors.md S10; P6a, P6b), the value quoted (package quote).
type UnknownPlatformError struct{ Value string }

func (e *UnknownPlatformError) Error() string {
	return fmt.Sprintf("%s=%s is not one of generic, trn3-switchv1", EnvVar, quote.String(e.Value))
}

// Generic is every platform but TRN3-SwitchV1: no kangaRing.
var Generic = Platform{}

// SwitchV1 is the TRN3-SwitchV1 platform the environment can name: virtual
// core size 0 and JBOG id 1 (D14).
var SwitchV1 = Platform{SwitchV1: true, VirtualCoreSize: 0, JbogID: 1}

// ParseEnv reads NCCOM_RING_PLATFORM's value (set reports whether it is set
// at all). Unset, empty or "generic" is Generic; "trn3-switchv1" is SwitchV1;
// case is ignored. Anything else is an *UnknownPlatformError.
func ParseEnv(value string, set bool) (Platform, error) {
	switch {
	case !set, value == "", strings.EqualFold(value, "generic"):
		return Generic, nil
	case strings.EqualFold(value, "trn3-switchv1"):
		return SwitchV1, nil
	}
	return Generic, &UnknownPlatformError{Value: value}
}

// CheckChannelCount reports an out-of-range comm->nKangaRingChannels (P2),
// fn naming the export for the WARN text.
func CheckChannelCount(fn string, n int32) error {
	if n < 0 || n > layout.MaxKangaPaths {
		return abi.Errorf(abi.InvalidArgument, "%s: comm->nKangaRingChannels %d is outside [0, %d]", fn, n, layout.MaxKangaPaths)
	}
	return nil
}

// Lift copies comm->kangaRing[k][0..3] into frag->JbogKangaringPath[k] for
// k < comm->nKangaRingChannels, on TRN3-SwitchV1 only (spec §2, D7). It writes
// nothing else. The count must have passed CheckChannelCount.
func Lift(comm *abi.Comm, frag *abi.TopoRanks, switchV1 bool) {
	if !switchV1 {
		return
	}
	for k := range int(comm.NKangaRingChannels) {
		frag.JbogKangaringPath[k] = [layout.KangaPathWidth]int32(comm.KangaRing[k][:layout.KangaPathWidth])
	}
}

// CheckPreconditions checks a SwitchV1 rank's preconditions of the Postset
// copy (D13): virtual-core size 0 and a JBOG id in {1, 2, 3}. Preset asks
// them of the platform and carries them in the rank's record; Postset
// checks every rank's (D27).
func CheckPreconditions(rank, virtualCoreSize, jbogID int32) error {
	if virtualCoreSize != 0 {
		return abi.Errorf(abi.InternalError, "ncclTopoPostset: kangaRing precondition failed: virtual core size of rank %d is %d, expected 0", rank, virtualCoreSize)
	}
	if jbogID < 1 || jbogID > 3 {
		return abi.Errorf(abi.InternalError, "ncclTopoPostset: kangaRing precondition failed: JBOG id of rank %d is %d, expected 1, 2 or 3", rank, jbogID)
	}
	return nil
}

// Materialize assembles comm->kangaRing[k] from the AllGathered fragments on
// TRN3-SwitchV1 (spec §4, D13): kangaRing[k][4v..4v+3] =
// all[v]->JbogKangaringPath[k][0..3] for k < paths, the job's
// nKangaRingChannels (D28: as the records say, 0..4, not the calling
// rank's comm), and v < min(16, len(all)). It returns the number of ints
// written per path (0 when the platform is not SwitchV1). Preconditions
// must have passed.
func Materialize(comm *abi.Comm, all []*abi.TopoRanks, switchV1 bool, paths int32) (intsPerPath int) {
	if !switchV1 {
		return 0
	}
	sources := min(layout.KangaFragmentsPerRow, len(all))
	for k := range int(paths) {
		row := &comm.KangaRing[k]
		for v := range sources {
			copy(row[v*layout.KangaPathWidth:], all[v].JbogKangaringPath[k][:])
		}
	}
	return sources * layout.KangaPathWidth
}

// PathLines returns the INFO lines Postset prints on SwitchV1 after a
// successful materialize of paths paths (D13, P13): "built %d kangaring
// paths" and one "kangaring path[%d]=..." per path with the ints written.
func PathLines(comm *abi.Comm, paths int32, intsPerPath int) []string {
	n := int(paths)
	lines := make([]string, 0, n+1)
	lines = append(lines, fmt.Sprintf("built %d kangaring paths", n))
	var b strings.Builder
	for k := range n {
		b.Reset()
		for i, v := range comm.KangaRing[k][:intsPerPath] {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprint(&b, v)
		}
		lines = append(lines, fmt.Sprintf("kangaring path[%d]=%s", k, b.String()))
	}
	return lines
}
