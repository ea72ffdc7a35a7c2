// Package abifixture finds the stand-in libnccom builds of tests/c/abi for
// the Go tests of abicheck and cmd/nccom-abi: $NCCOMRING_BUILD/abi/NAME,
// which `make test-abi-tool` (and, for selfcheck/*, `make test-abi-check`)
// builds. Without them the calling test skips.
package abifixture

import (
	"os"
	"path/filepath"
	"testing"
)

// Path is the fixture NAME (relative to $NCCOMRING_BUILD/abi), or skips t.
func Path(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("NCCOMRING_BUILD")
	if dir == "" {
		t.Skip("NCCOMRING_BUILD is not set; make test-abi-tool sets it and builds the fixtures")
	}
	path := filepath.Join(dir, "abi", name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is not built; run make test-abi-tool and make test-abi-check", path)
	}
	return path
}
