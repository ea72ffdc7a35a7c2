package main

import (
	"strings"
	"testing"
	"time"

	"github.com/nccomring/libnccomring/abicheck"
	"github.com/nccomring/libnccomring/internal/abifixture"
	"github.com/nccomring/libnccomring/layout"
)

// The self-check in the host never waits past its bound (issue 21): a
// read that cannot finish in time is "not verified", a WARN. Here the
// bound is a nanosecond, on the matching stand-in (make test-abi-check
// builds it; without it the test skips).
func TestSelfCheckAnswersNotVerifiedWhenTimeRunsOut(t *testing.T) {
	path := abifixture.Path(t, "selfcheck/match/libnccom.so.2")
	lib, err := abicheck.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	obj := abicheck.MappedObject{Path: path, SONAME: abicheck.LibnccomSONAME, SONAMEKnown: true, BuildID: lib.BuildID()}
	lib.Close()

	// A wall-clock bound, kept: the host's wait is the subject, and by
	// design it ends by the wall clock, at most a second past the limit
	// (checkWithin's timer); the bound leaves one more for a busy machine.
	start := time.Now()
	m := readWithin([]abicheck.MappedObject{obj}, time.Nanosecond)
	sc := m.Check(layout.D3Offsets, "D3")
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %v", took)
	}
	if sc.Report != nil || !sc.Warn || !strings.Contains(sc.Why, "did not finish") {
		t.Errorf("want not verified (a WARN) for the deadline, got report %v, warn %v, %q", sc.Report != nil, sc.Warn, sc.Why)
	}

	m = readWithin([]abicheck.MappedObject{obj}, selfCheckTimeout)
	sc = m.Check(layout.D3Offsets, "D3")
	if sc.Report == nil || !sc.Report.OK {
		t.Errorf("within the bound the stand-in matches: %q", sc.Why)
	}
}
