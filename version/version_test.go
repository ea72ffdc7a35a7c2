package version

import (
	"os"
	"regexp"
	"testing"
)

// The header is the one source of the version (SONAME major, the library's
// nccomring_version(), ringstage --version); this mirror must equal it.
func TestLibraryIsTheHeadersVersion(t *testing.T) {
	header, err := os.ReadFile("../include/nccom_ring.h")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#define NCCOMRING_VERSION "([^"]+)"$`).FindSubmatch(header)
	if m == nil {
		t.Fatal("include/nccom_ring.h defines no NCCOMRING_VERSION")
	}
	if string(m[1]) != Library {
		t.Errorf("version.Library is %q, the header's NCCOMRING_VERSION %q", Library, m[1])
	}
	major := regexp.MustCompile(`(?m)^#define NCCOMRING_VERSION_MAJOR (\d+)$`).FindSubmatch(header)
	if major == nil || !regexp.MustCompile(`^`+string(major[1])+`\.`).MatchString(Library) {
		t.Errorf("NCCOMRING_VERSION_MAJOR %q does not begin %q", major, Library)
	}
}
