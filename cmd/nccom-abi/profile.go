package main

import (
	"flag"
	"fmt"
	"github.com/nccomring/libnccomring/abicheck"
	"path/filepath"

	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/layout"
)

// layoutProfile is the file NCCOM_RING_LAYOUT names.
type layoutProfile struct {
	Comm    offsets     `json:"ncclComm"`
	Sizeof  structSizes `json:"sizeof"`
	Source  string      `json:"source"`
	BuildID string      `json:"buildId"`
}

// structSizes are the sizes of the structs a profile's offsets are in.
type structSizes struct {
	Comm int64 `json:"ncclComm"`
}

var profileCommand = &cli.Command{
	Name:    "profile",
	Summary: "the ASSUMED ncclComm offsets LIB has, as JSON (NCCOM_RING_LAYOUT)",
	Usage:   []string{"LIB > layout.json"},
	Doc: `Writes the offsets LIB's ncclComm has for the ASSUMED (D3) fields as JSON:

  {
    "ncclComm": {"topo": 17552, "rank": 17616, "nRanks": 17620,
                 "node": 17640, "nNodes": 17644, "nChannels": 17704},
    "sizeof": {"ncclComm": 19224},
    "source": "/abs/path/of/LIB",
    "buildId": "hex GNU build ID of LIB, or empty"
  }

The library reads the offsets only inside the sizeof it declares, and only
over the build it names: the libnccom.so.2 mapped in the job must have
that build ID. Only the ASSUMED fields are written: the documented (D2) ones are fixed by
the ABI and never overridable. Exit 1, with nothing on stdout, when an
ASSUMED field is missing or has another size than layout/'s, or when a
documented ncclComm field or its minimum size differs (no layout file can
fix that; run nccom-abi check LIB).
`,
	Setup: func(fs *flag.FlagSet) func(*cli.Invocation) int { return runProfile },
}

func runProfile(inv *cli.Invocation) int {
	ops, stdout, stderr := inv.Operands, inv.Stdout, inv.Stderr
	if len(ops) != 1 {
		return inv.UsageError("give exactly one LIB")
	}
	prof, problems, err := profileLibrary(ops[0])
	if err != nil {
		return reportError(stderr, "profile", err)
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(stderr, "nccom-abi profile: %s\n", p)
		}
		fmt.Fprintf(stderr, "nccom-abi profile: no profile written; run nccom-abi check %s\n", quote.Visible(ops[0]))
		return cli.ExitFinding
	}
	if err := writeJSON(stdout, prof); err != nil {
		return reportError(stderr, "profile", err)
	}
	return cli.ExitOK
}

// profileLibrary reads LIB's ncclComm. problems lists what makes a profile
// meaningless: a missing or resized ASSUMED field, a documented field or
// size that differs.
func profileLibrary(path string) (*layoutProfile, []string, error) {
	defs, buildID, err := abicheck.ReadStructs(path, []string{"ncclComm"})
	if err != nil {
		return nil, nil, err
	}
	comm := defs["ncclComm"].Type
	prof := &layoutProfile{Comm: offsets{}, Sizeof: structSizes{Comm: comm.Size()}, BuildID: buildID}
	if prof.Source, err = filepath.Abs(path); err != nil {
		prof.Source = path
	}
	var problems []string
	if size := comm.Size(); size < int64(abicheck.MinSizes["ncclComm"]) {
		problems = append(problems, fmt.Sprintf("ncclComm: sizeof is %d, layout/ needs at least %d (D3)", size, abicheck.MinSizes["ncclComm"]))
	} else if size > layout.MaxCommOffset {
		problems = append(problems, fmt.Sprintf("ncclComm: sizeof is %d, more than the %d a layout profile may declare", size, layout.MaxCommOffset))
	}
	for _, f := range layout.Fields {
		if f.Struct != "ncclComm" {
			continue
		}
		fc := abicheck.CompareField(comm, f)
		switch {
		case f.Grade != layout.Assumed:
			if fc.Status != abicheck.StatusOK {
				problems = append(problems, abicheck.DescribeMismatch(fc)+": a documented field, not overridable")
			}
		case fc.Status == abicheck.StatusMissing:
			problems = append(problems, abicheck.DescribeMismatch(fc))
		case *fc.ActualSize != int64(f.Size):
			problems = append(problems, abicheck.DescribeMismatch(fc)+": the ring stage reads it as "+sizeWord(f.Size))
		default:
			prof.Comm = append(prof.Comm, namedOffset{f.Name, *fc.ActualOffset})
		}
	}
	return prof, problems, nil
}

func sizeWord(n int) string {
	switch n {
	case 4:
		return "an int"
	case 8:
		return "a pointer"
	}
	return fmt.Sprintf("%d bytes", n)
}
