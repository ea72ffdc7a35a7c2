package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/nccomring/libnccomring/kanga"
)

// platformWarned makes an unknown NCCOM_RING_PLATFORM one WARN per process
// (D14, D28, docs/errors.md S10).
var platformWarned atomic.Bool

// hostPlatform answers one call's platform questions (D14, P18): from the
// host's hooks when it defines neuronIsTrn3SwitchV1Family (looked up anew
// in the calling object, then globally), else from NCCOM_RING_PLATFORM.
// Preconditions is asked only after IsSwitchV1 said true, and from the same
// source.
type hostPlatform struct {
	fn       string
	rank     int32
	caller   unsafe.Pointer
	fromHost bool
}

// platformPool recycles hostPlatforms: ring.Preset and ring.Postset take
// them as a kanga.Resolver, and an interface's value escapes to the Go heap,
// so a fresh one per call would be garbage on every call (issue 13: no GC
// at steady state).
var platformPool = sync.Pool{New: func() any { return new(hostPlatform) }}

func newHostPlatform(fn string, rank int32, caller unsafe.Pointer) *hostPlatform {
	p := platformPool.Get().(*hostPlatform)
	*p = hostPlatform{fn: fn, rank: rank, caller: caller}
	return p
}

// release returns p to the pool once the call is over; nothing keeps it.
func (p *hostPlatform) release() {
	*p = hostPlatform{}
	platformPool.Put(p)
}

// warnUnknown prints an unknown NCCOM_RING_PLATFORM's WARN once per
// process, after a Preset that carried it in its record as "unknown"
// (D28: Preset no longer fails on it; every Postset refuses the job).
func (p *hostPlatform) warnUnknown() {
	if p.fromHost {
		return
	}
	if _, _, err := envPlatform(); err != nil && platformWarned.CompareAndSwap(false, true) {
		warn(p.rank, fmt.Sprintf("%s: %v: this rank's record says its platform is unknown, and every rank's ncclTopoPostset will refuse the job (D28)", p.fn, err))
	}
}

func (p *hostPlatform) IsSwitchV1() (bool, error) {
	if answer := C.nccomring_host_family(p.caller); answer >= 0 {
		p.fromHost = true
		return answer != 0, nil
	}
	platform, set, err := envPlatform()
	if err == nil && !set {
		assumedGeneric.Do(func() {
			info(C.NCCOMRING_SUBSYS_INIT, p.rank, fmt.Sprintf("%s: the host defines no neuronIsTrn3SwitchV1Family and %s is unset: assuming a generic platform (no kangaRing)", p.fn, kanga.EnvVar))
		})
	}
	return platform.SwitchV1, err
}

func (p *hostPlatform) Preconditions(rank int32) (virtualCoreSize, jbogID int32) {
	if !p.fromHost {
		platform, _, _ := envPlatform()
		return platform.VirtualCoreSize, platform.JbogID
	}
	var vcore, jbog C.int
	C.nccomring_host_preconditions(p.caller, C.int(rank), &vcore, &jbog)
	return int32(vcore), int32(jbog)
}

// assumedGeneric makes the "assuming a generic platform" INFO line one per
// process.
var assumedGeneric sync.Once

// envPlatform is NCCOM_RING_PLATFORM (params.go: read at the first call
// that needs it, kept for the process; docs/errors.md Environment).
func envPlatform() (platform kanga.Platform, set bool, err error) {
	r, _ := platformParam.get()
	return r.value, r.set, r.err
}
