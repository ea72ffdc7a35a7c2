package headercheck

// This test uses only the standard library: `make` runs it on every library
// build, which must not need test-only modules.

import (
	"testing"

	"github.com/nccomring/libnccomring/layout"
)

// The C header, package layout and (through abi's compile-time asserts) the
// Go mirrors agree on every documented offset, size, result code and
// constant.
func TestHeaderMatchesLayoutTable(t *testing.T) {
	for _, m := range layoutMismatches() {
		t.Error(m)
	}
	if got, want := len(headerMembers()), len(layout.Fields); got != want {
		t.Errorf("the header documents %d members, the layout table %d", got, want)
	}
}
