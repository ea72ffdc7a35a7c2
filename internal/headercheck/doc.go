// Package headercheck checks that include/nccom_ring.h, the Go mirrors of
// package abi and package layout's table agree, and that the generated
// mirrors are up to date. It holds, generated into ztypes.go like abi's
// mirrors (`make generate`), the header's own view of the structs abi
// mirrors by hand (ncclComm, ncclTopoSystem) and the header's constants.
//
// Test-only: nothing in the shipped library imports it. Its tests use only
// the standard library, because `make` runs them after every library build,
// which must not need test-only modules.
package headercheck
