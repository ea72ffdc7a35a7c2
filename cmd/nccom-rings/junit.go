package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/verify"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/junit"
)

// verifyCases is verify's report as JUnit testcases: "job" (the findings
// about no one rank: missing ranks, the directory, the node order; and the
// ones left out past the limit), then one per rank of the job, failed with
// its findings, each with what to check next. A dump that could not be
// used is an error (its rank could not be checked), not a failure.
func verifyCases(rep verify.Report) []junit.Case {
	byRank := make([][]verify.Finding, rep.Ranks)
	var job []verify.Finding
	for _, f := range rep.Findings {
		if f.Rank >= 0 && f.Rank < rep.Ranks {
			byRank[f.Rank] = append(byRank[f.Rank], f)
		} else {
			job = append(job, f)
		}
	}
	cases := []junit.Case{findingsCase("job", job, rep.Omitted)}
	for r, fs := range byRank {
		cases = append(cases, findingsCase(fmt.Sprintf("rank %d", r), fs, 0))
	}
	return cases
}

func findingsCase(name string, fs []verify.Finding, omitted int) junit.Case {
	c := junit.Case{Name: name, Classname: "nccom-rings.verify"}
	var failures, errors []string
	for _, f := range fs {
		text := f.Message + "\n  check: " + f.Hint
		if f.Kind == verify.KindUnusable {
			errors = append(errors, text)
		} else {
			failures = append(failures, text)
		}
	}
	if omitted > 0 {
		failures = append(failures, fmt.Sprintf("and %d more %s, left out", omitted, plural(omitted, "finding", "findings")))
	}
	// An error says everything about the rank; the other findings follow it.
	if len(errors) > 0 {
		c.Error = strings.Join(append(errors, failures...), "\n")
	} else {
		c.Failure = strings.Join(failures, "\n")
	}
	return c
}

// writeVerifyJUnit writes path (when given) and returns code, or 2 when
// the file could not be written: a CI step that asked for it must not
// pass without it.
func writeVerifyJUnit(stderr io.Writer, path string, rep verify.Report, code int) int {
	if path == "" {
		return code
	}
	if err := junit.WriteFile(path, junit.Suite{Name: "nccom-rings verify " + rep.Dir, Cases: verifyCases(rep)}); err != nil {
		fmt.Fprintf(stderr, "nccom-rings verify: --junit %s: %v\n", path, err)
		return cli.ExitUnusable
	}
	return code
}
