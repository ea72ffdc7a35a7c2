// Package version is libnccomring's version for Go code (the tools'
// --version). The one source is include/nccom_ring.h's NCCOMRING_VERSION;
// this constant mirrors it, and the package's test fails when they differ.
package version

// Library is NCCOMRING_VERSION.
const Library = "0.9.0"
