// Package depcheck holds the test that keeps the tools' code out of the
// library (issue 35): libnccomring.so links only the packages its test
// names, no library package or its tests imports a tool's package, and the
// built .so holds no symbol of one. The tools may use the library's
// packages; the other way round would put tool code, and what it imports,
// into every process that loads the library.
package depcheck
