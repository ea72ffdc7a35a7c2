//go:build !unix

package abicheck

import "os"

// mapFile maps nothing here: sections are read into memory.
func mapFile(*os.File) []byte { return nil }

func unmapFile([]byte) {}
