package main

import (
	"fmt"
	"github.com/nccomring/libnccomring/abicheck"
	"io"
	"strings"

	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/junit"
	"github.com/nccomring/libnccomring/internal/quote"
)

// checkCases is check's report as testcases: each struct's size, then
// each field, in the tables' order. A failure's message is the line the
// text output gives the mismatch.
func checkCases(rep *checkReport) []junit.Case {
	var cases []junit.Case
	for _, s := range rep.Structs {
		c := junit.Case{Name: "sizeof " + s.Struct, Classname: "nccom-abi.check"}
		if !s.OK {
			c.Failure = findMismatch(rep.Mismatches, s.Struct+": ", fmt.Sprintf("%s: sizeof is %d", s.Struct, s.ActualSize))
		}
		cases = append(cases, c)
	}
	for _, f := range rep.Fields {
		name := f.Struct + "." + f.Field
		c := junit.Case{Name: name + " (" + f.Grade + ")", Classname: "nccom-abi.check"}
		if f.Status != abicheck.StatusOK {
			c.Failure = findMismatch(rep.Mismatches, name+" ", name+": "+f.Status)
		}
		cases = append(cases, c)
	}
	return cases
}

// findMismatch is the first mismatch line starting with prefix, else
// fallback (a status without its own line).
func findMismatch(mismatches []string, prefix, fallback string) string {
	for _, m := range mismatches {
		if strings.HasPrefix(m, prefix) {
			return m
		}
	}
	return fallback
}

// preloadCases is preload's report as testcases: one per function, failed
// unless preloading replaces it for hosts and LIB.
func preloadCases(rep *preloadReport) []junit.Case {
	var cases []junit.Case
	for _, fv := range rep.Functions {
		c := junit.Case{Name: fv.Function, Classname: "nccom-abi.preload"}
		if fv.Verdict != verdictFull {
			c.Failure = fmt.Sprintf("%s: %s: %s", fv.Function, verdictText[fv.Verdict], fv.Reason)
		}
		cases = append(cases, c)
	}
	return cases
}

// writeJUnit writes path (when given) for command name over lib: cases,
// or, when err is set, one errored testcase saying why LIB could not be
// judged. It returns code, or 2 when the file could not be written: a CI
// step that asked for the file must not pass without it.
func writeJUnit(stderr io.Writer, path, name, lib string, cases []junit.Case, err error, code int) int {
	if path == "" {
		return code
	}
	if err != nil {
		cases = []junit.Case{{Name: "read " + lib, Classname: "nccom-abi." + name, Error: strings.TrimSpace(err.Error())}}
	}
	if werr := junit.WriteFile(path, junit.Suite{Name: "nccom-abi " + name + " " + lib, Cases: cases}); werr != nil {
		fmt.Fprintf(stderr, "nccom-abi %s: --junit %s: %s\n", name, quote.Visible(path), quote.Visible(werr.Error()))
		return cli.ExitUnusable
	}
	return code
}
