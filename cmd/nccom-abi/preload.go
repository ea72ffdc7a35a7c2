package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/nccomring/libnccomring/abicheck"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/junit"
	"github.com/nccomring/libnccomring/internal/quote"
)

// ringFunction is one of the four ring-stage functions under the names a C
// and a C++ build of libnccom give it (cmd/libnccomring/exports.map).
// Demangled is the C++ name spelled out for display: a table of these four
// rather than a general demangler.
type ringFunction struct {
	C         string
	Mangled   string
	Demangled string
}

var ringFunctions = []ringFunction{
	{"ncclTopoPreset", "_Z14ncclTopoPresetP8ncclCommP13ncclTopoGraphP13ncclTopoRanks",
		"ncclTopoPreset(ncclComm*, ncclTopoGraph*, ncclTopoRanks*)"},
	{"ncclTopoPostset", "_Z15ncclTopoPostsetP8ncclCommPiPP13ncclTopoRanksS1_S1_",
		"ncclTopoPostset(ncclComm*, int*, ncclTopoRanks**, int*, int*)"},
	{"ncclBuildRings", "_Z14ncclBuildRingsiPiiiS_S_",
		"ncclBuildRings(int, int*, int, int, int*, int*)"},
	{"ncclTopoGetNetDev", "_Z17ncclTopoGetNetDevP14ncclTopoSystemiP13ncclTopoGraphiPi",
		"ncclTopoGetNetDev(ncclTopoSystem*, int, ncclTopoGraph*, int, int*)"},
}

// Verdicts, best first.
const (
	verdictFull      = "hosts and LIB"
	verdictHostsOnly = "hosts only"
	verdictNothing   = "nothing"
)

var verdictRank = map[string]int{verdictFull: 0, verdictHostsOnly: 1, verdictNothing: 2}

var verdictText = map[string]string{
	verdictFull:      "preloading replaces calls from hosts and from inside LIB",
	verdictHostsOnly: "preloading replaces calls from hosts only",
	verdictNothing:   "preloading replaces nothing",
}

// symbolReport is one name of one function as LIB has it.
type symbolReport struct {
	Function    string   `json:"function"`
	Symbol      string   `json:"symbol"`
	Display     string   `json:"display"` // the demangled C++ name, or the C name
	Table       string   `json:"table"`   // ".dynsym" or ".symtab" (only there)
	Defined     bool     `json:"defined"`
	Binding     string   `json:"binding"`
	Visibility  string   `json:"visibility"`
	Relocations []string `json:"relocations"` // dynamic relocations against it, e.g. "R_X86_64_JUMP_SLOT (.rela.plt)"
	Verdict     string   `json:"verdict"`
	Reason      string   `json:"reason"`
}

// functionVerdict is the best verdict among a function's names: a caller
// binds to whichever name its declarations give, and LIB's own calls use
// the name LIB was compiled with, which is the one it defines.
type functionVerdict struct {
	Function string `json:"function"`
	Verdict  string `json:"verdict"`
	Reason   string `json:"reason"`
}

type preloadReport struct {
	Library    string            `json:"library"`
	BuildID    string            `json:"buildId"`
	DTFlags    uint64            `json:"dtFlags"`
	DFSymbolic bool              `json:"dfSymbolic"`
	DTSymbolic bool              `json:"dtSymbolic"`
	HasSymtab  bool              `json:"hasSymtab"`
	Symbols    []symbolReport    `json:"symbols"`
	Functions  []functionVerdict `json:"functions"`
	Verdict    string            `json:"verdict"` // the worst of the four
	OK         bool              `json:"ok"`      // every function "hosts and LIB"
}

var preloadCommand = &cli.Command{
	Name:    "preload",
	Summary: "can LD_PRELOAD replace LIB's four ring-stage functions?",
	Usage:   []string{"[--json] [--junit FILE] LIB"},
	Doc: `Tells whether LD_PRELOAD of libnccomring replaces LIB's ncclTopoPreset,
ncclTopoPostset, ncclBuildRings and ncclTopoGetNetDev. For each function it
looks up the C name and the C++ (Itanium) name in .dynsym and .symtab, with
binding and visibility; reads DT_FLAGS (DF_SYMBOLIC) and DT_SYMBOLIC; and
lists the dynamic relocations (.rela.plt, .rela.dyn) against the function's
dynamic symbol, which is how LIB's own calls reach it through its PLT/GOT.

Verdicts:
  hosts and LIB  preloading replaces calls from hosts and from inside LIB:
                 exported with default visibility, LIB's own calls go
                 through its PLT/GOT, no -Bsymbolic.
  hosts only     preloading replaces calls from hosts only: LIB binds its
                 own calls to its own copy (-Bsymbolic, protected
                 visibility, or no relocation: -Bsymbolic-functions,
                 -fno-semantic-interposition, inlining, or LIB never
                 calls it). libnccom's own ring stage then still runs.
  nothing        not in .dynsym (hidden visibility, a version script's
                 local:, static) or not in LIB at all: preloading replaces
                 no call.
Exit 1 unless every function is "hosts and LIB": libnccom calls the ring
stage from inside itself (initTransportsRank), so that is what a preload
over libnccom needs. A host that dlopens LIB with RTLD_DEEPBIND defeats
preloading whatever the verdict.
`,
	Setup: judgeSetup(preloadLibrary),
}

func (r *preloadReport) passed() bool        { return r.OK }
func (r *preloadReport) cases() []junit.Case { return preloadCases(r) }
func (r *preloadReport) print(w io.Writer)   { printPreload(w, r) }

func preloadLibrary(path string) (*preloadReport, error) {
	lib, err := abicheck.Open(path)
	if err != nil {
		return nil, err
	}
	defer lib.Close()
	if err := requireSharedObject(lib); err != nil {
		return nil, err
	}
	if err := lib.CheckTables(); err != nil {
		return nil, err
	}
	f := lib.File
	rep := &preloadReport{Library: path, BuildID: lib.BuildID()}
	if vals, err := f.DynValue(elf.DT_FLAGS); err == nil && len(vals) > 0 {
		rep.DTFlags = vals[0]
		rep.DFSymbolic = vals[0]&uint64(elf.DF_SYMBOLIC) != 0
	}
	if vals, err := f.DynValue(elf.DT_SYMBOLIC); err == nil && len(vals) > 0 {
		rep.DTSymbolic = true // its value is ignored: being there is the flag
	}

	dyn, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, &abicheck.UnusableError{What: fmt.Sprintf("%s: reading .dynsym: %v", path, err), Hint: "the file is damaged"}
	}
	static, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, &abicheck.UnusableError{What: fmt.Sprintf("%s: reading .symtab: %v", path, err), Hint: "the file is damaged"}
	}
	rep.HasSymtab = len(static) > 0
	relocs, err := dynamicRelocations(f)
	if err != nil {
		return nil, &abicheck.UnusableError{What: fmt.Sprintf("%s: reading relocations: %v", path, err), Hint: "the file is damaged"}
	}

	rep.Verdict = verdictFull
	for _, fn := range ringFunctions {
		syms := functionSymbols(fn, dyn, static, relocs, rep.DFSymbolic || rep.DTSymbolic)
		rep.Symbols = append(rep.Symbols, syms...)
		fv := bestVerdict(fn, syms, rep.HasSymtab)
		rep.Functions = append(rep.Functions, fv)
		if verdictRank[fv.Verdict] > verdictRank[rep.Verdict] {
			rep.Verdict = fv.Verdict
		}
	}
	rep.OK = rep.Verdict == verdictFull
	return rep, nil
}

// functionSymbols reports fn's names as LIB has them: from .dynsym, or
// from .symtab when .dynsym lacks the name.
func functionSymbols(fn ringFunction, dyn, static []elf.Symbol, relocs map[int][]string, symbolic bool) []symbolReport {
	var out []symbolReport
	for _, name := range []string{fn.C, fn.Mangled} {
		display := fn.C
		if name == fn.Mangled {
			display = fn.Demangled
		}
		if i, ok := symbolIndex(dyn, name); ok {
			// DynamicSymbols drops the null symbol: entry i is dynamic symbol i+1,
			// the index relocations use.
			sr := newSymbolReport(fn.C, name, display, ".dynsym", dyn[i])
			sr.Relocations = relocs[i+1]
			sr.Verdict, sr.Reason = dynamicVerdict(dyn[i], sr.Relocations, symbolic)
			out = append(out, sr)
			continue
		}
		if i, ok := symbolIndex(static, name); ok {
			sr := newSymbolReport(fn.C, name, display, ".symtab", static[i])
			sr.Verdict = verdictNothing
			sr.Reason = fmt.Sprintf("not in .dynsym, only in .symtab (%s, %s): %s", sr.Binding, sr.Visibility, whyNotExported(static[i]))
			out = append(out, sr)
		}
	}
	return out
}

func symbolIndex(syms []elf.Symbol, name string) (int, bool) {
	for i, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) != elf.STT_SECTION {
			return i, true
		}
	}
	return 0, false
}

func newSymbolReport(function, name, display, table string, s elf.Symbol) symbolReport {
	return symbolReport{
		Function: function, Symbol: name, Display: display, Table: table,
		Defined:     s.Section != elf.SHN_UNDEF,
		Binding:     strings.TrimPrefix(elf.ST_BIND(s.Info).String(), "STB_"),
		Visibility:  strings.TrimPrefix(elf.ST_VISIBILITY(s.Other).String(), "STV_"),
		Relocations: []string{},
	}
}

// dynamicVerdict judges a name LIB has in .dynsym. The order matters: a
// symbolic link binds LIB's references at load even when relocations
// remain, and protected visibility binds them at link time.
func dynamicVerdict(s elf.Symbol, relocs []string, symbolic bool) (string, string) {
	bind := elf.ST_BIND(s.Info)
	vis := elf.ST_VISIBILITY(s.Other)
	switch {
	case s.Section == elf.SHN_UNDEF:
		return verdictFull, "LIB does not define it but imports it: its calls resolve through the global scope, where a preloaded definition comes first"
	case bind != elf.STB_GLOBAL && bind != elf.STB_WEAK:
		return verdictNothing, fmt.Sprintf("its binding is %v: the dynamic linker does not interpose it", bind)
	case vis == elf.STV_HIDDEN || vis == elf.STV_INTERNAL:
		return verdictNothing, fmt.Sprintf("%v visibility: not interposable", vis)
	case symbolic:
		return verdictHostsOnly, "LIB is linked with -Bsymbolic (DF_SYMBOLIC/DT_SYMBOLIC): the dynamic linker binds LIB's own references to LIB's definition"
	case vis == elf.STV_PROTECTED:
		return verdictHostsOnly, "protected visibility: LIB's own calls are bound to LIB's definition at link time"
	case len(relocs) == 0:
		return verdictHostsOnly, "no relocation in LIB refers to it, so LIB's own calls, if it makes any, are bound at link time (-Bsymbolic-functions, -fno-semantic-interposition, inlining)"
	default:
		return verdictFull, "exported with default visibility, and LIB's own calls go through its PLT/GOT (" + strings.Join(relocs, ", ") + ")"
	}
}

// whyNotExported says how a definition ends up outside .dynsym. The static
// linker rewrites hidden symbols to LOCAL with default visibility, so a
// LOCAL symbol may be any of three things.
func whyNotExported(s elf.Symbol) string {
	switch {
	case elf.ST_VISIBILITY(s.Other) == elf.STV_HIDDEN:
		return "hidden visibility (-fvisibility=hidden or __attribute__((visibility(\"hidden\"))))"
	case elf.ST_BIND(s.Info) == elf.STB_LOCAL:
		return "hidden visibility (-fvisibility=hidden), static, or a version script's local:"
	default:
		return "not exported"
	}
}

// bestVerdict picks the best of fn's names (see functionVerdict).
func bestVerdict(fn ringFunction, syms []symbolReport, hasSymtab bool) functionVerdict {
	if len(syms) == 0 {
		reason := fmt.Sprintf("LIB has neither %s nor %s in .dynsym or .symtab", fn.C, fn.Mangled)
		if !hasSymtab {
			reason = fmt.Sprintf("LIB has neither %s nor %s in .dynsym, and no .symtab (stripped) to tell a hidden definition from none", fn.C, fn.Mangled)
		}
		return functionVerdict{Function: fn.C, Verdict: verdictNothing, Reason: reason}
	}
	best := syms[0]
	for _, s := range syms[1:] {
		if verdictRank[s.Verdict] < verdictRank[best.Verdict] {
			best = s
		}
	}
	reason := best.Reason
	if best.Symbol == fn.Mangled {
		reason = "by its C++ name " + best.Display + ": " + reason
	}
	return functionVerdict{Function: fn.C, Verdict: best.Verdict, Reason: reason}
}

// dynamicRelocations maps a dynamic symbol index to the relocations against
// it, from every REL/RELA section tied to .dynsym (.rela.plt, .rela.dyn).
// debug/elf decodes only DWARF's relocations, so the entries are read here
// with its Rel/Rela types and R_SYM macros.
func dynamicRelocations(f *elf.File) (map[int][]string, error) {
	out := make(map[int][]string)
	dynsym := -1
	for i, s := range f.Sections {
		if s.Type == elf.SHT_DYNSYM {
			dynsym = i
		}
	}
	if dynsym < 0 {
		return out, nil
	}
	for _, s := range f.Sections {
		if (s.Type != elf.SHT_RELA && s.Type != elf.SHT_REL) || int(s.Link) != dynsym {
			continue
		}
		data, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		entries, err := decodeRelocations(f, s.Type, data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		for _, e := range entries {
			if e.sym != 0 {
				out[e.sym] = append(out[e.sym], relocTypeName(f.Machine, e.typ)+" ("+s.Name+")")
			}
		}
	}
	return out, nil
}

type relocEntry struct {
	sym int
	typ uint32
}

func decodeRelocations(f *elf.File, typ elf.SectionType, data []byte) ([]relocEntry, error) {
	r := bytes.NewReader(data)
	var out []relocEntry
	switch {
	case f.Class == elf.ELFCLASS64 && typ == elf.SHT_RELA:
		rels := make([]elf.Rela64, len(data)/binary.Size(elf.Rela64{}))
		if err := binary.Read(r, f.ByteOrder, rels); err != nil {
			return nil, err
		}
		for _, e := range rels {
			out = append(out, relocEntry{int(elf.R_SYM64(e.Info)), elf.R_TYPE64(e.Info)})
		}
	case f.Class == elf.ELFCLASS64:
		rels := make([]elf.Rel64, len(data)/binary.Size(elf.Rel64{}))
		if err := binary.Read(r, f.ByteOrder, rels); err != nil {
			return nil, err
		}
		for _, e := range rels {
			out = append(out, relocEntry{int(elf.R_SYM64(e.Info)), elf.R_TYPE64(e.Info)})
		}
	case typ == elf.SHT_RELA:
		rels := make([]elf.Rela32, len(data)/binary.Size(elf.Rela32{}))
		if err := binary.Read(r, f.ByteOrder, rels); err != nil {
			return nil, err
		}
		for _, e := range rels {
			out = append(out, relocEntry{int(elf.R_SYM32(e.Info)), elf.R_TYPE32(e.Info)})
		}
	default:
		rels := make([]elf.Rel32, len(data)/binary.Size(elf.Rel32{}))
		if err := binary.Read(r, f.ByteOrder, rels); err != nil {
			return nil, err
		}
		for _, e := range rels {
			out = append(out, relocEntry{int(elf.R_SYM32(e.Info)), elf.R_TYPE32(e.Info)})
		}
	}
	return out, nil
}

func relocTypeName(m elf.Machine, t uint32) string {
	switch m {
	case elf.EM_X86_64:
		return elf.R_X86_64(t).String()
	case elf.EM_AARCH64:
		return elf.R_AARCH64(t).String()
	case elf.EM_386:
		return elf.R_386(t).String()
	}
	return fmt.Sprintf("relocation type %d", t)
}

func printPreload(w io.Writer, rep *preloadReport) {
	fmt.Fprintf(w, "library   %s\n", quote.Visible(rep.Library))
	if rep.BuildID != "" {
		fmt.Fprintf(w, "build ID  %s\n", rep.BuildID)
	}
	flags := fmt.Sprintf("DT_FLAGS %#x", rep.DTFlags)
	if rep.DFSymbolic {
		flags += " (DF_SYMBOLIC)"
	} else {
		flags += " (no DF_SYMBOLIC)"
	}
	if rep.DTSymbolic {
		flags += ", DT_SYMBOLIC"
	} else {
		flags += ", no DT_SYMBOLIC"
	}
	fmt.Fprintf(w, "dynamic   %s\n\n", flags)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SYMBOL\tTABLE\tBIND\tVISIBILITY\tRELOCATIONS IN LIB\tVERDICT")
	for _, s := range rep.Symbols {
		rel := "-"
		if len(s.Relocations) > 0 {
			rel = shortRelocs(s.Relocations)
		}
		vis := s.Visibility
		if !s.Defined {
			vis += " (undefined)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Display, s.Table, s.Binding, vis, rel, s.Verdict)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, fv := range rep.Functions {
		fmt.Fprintf(w, "%s: %s: %s\n", fv.Function, verdictText[fv.Verdict], fv.Reason)
	}
	fmt.Fprintln(w)
	same := true
	for _, fv := range rep.Functions {
		same = same && fv.Verdict == rep.Verdict
	}
	if same {
		fmt.Fprintf(w, "verdict: %s, for all four functions\n", verdictText[rep.Verdict])
	} else {
		fmt.Fprintf(w, "verdict: at worst %s (see each function above)\n", verdictText[rep.Verdict])
	}
	if !rep.OK {
		fmt.Fprintln(w, "libnccom calls the ring stage from inside itself, so LD_PRELOAD of libnccomring does not replace it in this build")
	}
}

// shortRelocs prints "R_X86_64_JUMP_SLOT (.rela.plt)" as "JUMP_SLOT".
func shortRelocs(rels []string) string {
	var out []string
	for _, r := range rels {
		name, _, _ := strings.Cut(r, " ")
		for _, p := range []string{"R_X86_64_", "R_AARCH64_", "R_386_"} {
			name = strings.TrimPrefix(name, p)
		}
		out = append(out, name)
	}
	return strings.Join(out, ", ")
}

// requireSharedObject refuses anything but ET_DYN: only a shared object
// has a dynamic symbol table that LD_PRELOAD can act on.
func requireSharedObject(l *abicheck.Library) error {
	if l.File.Type == elf.ET_DYN {
		return nil
	}
	return &abicheck.UnusableError{
		What: fmt.Sprintf("%s is not a shared object (ELF type %v)", l.Path, l.File.Type),
		Hint: "this is not a shared object: give the libnccom.so that the job loads",
	}
}
