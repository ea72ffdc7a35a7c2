package main

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/ring"
)

//go:generate go test -run ^TestGeneratedFilesAreCurrent$ -update

// The registry of every environment variable the library, its logger and
// the preload shim read (issues 20, 35), as NCCL_PARAM is libnccom's: one
// row per variable, below. A new variable is a new row (its name, whether
// it is a path, its default, its parser, when it is read, its cells in
// docs/environment.md's table); `make generate` then writes zenv.h, the
// list C reads by, and docs/environment.md's table
// (TestGeneratedFilesAreCurrent fails until it has). TestEachRowGenerates
// lists what each row generates and checks its doc cells. C keeps a list because its reader (env.c's
// nccomring_env) also serves the logger before Go is entered and the
// preload shim, which has no Go; a row's index is its id there.
//
// A variable is read from C's environment (getenv sees a host's setenv
// after load; Go's os.Getenv does not) at the time its row says:
//
//   - readInC: by log.c, once per process at the first call of any export,
//     before Go is entered (nccomring_log_init), or by the preload shim,
//     once, at its first call; they have no parser here.
//   - atLoad: once, when the library is loaded (package init). Logging has
//     not started then, so a WARN of its parser waits for the first call.
//   - atFirstUse: once per process, at the first call that needs it, and
//     kept (latched) for the process.
//   - atEveryCall: at every call that needs it, without allocating: the
//     value is compared with the last one read in place, in C's memory, and
//     parsed again only when it changed.
//
// A parser gets the value ("" and false when unset or empty, P20) and
// returns the value in effect; when it did not take the value as given,
// also an error whose text is the WARN (or the error) the variable's user
// reports, the value quoted (package quote: a newline in it cannot forge a
// log line). What to do with that error is the user's to say, next to the
// call that reads the variable.
//
// Under secure execution (AT_SECURE: env.h, docs/security.md) C's reader
// returns a path row as unset; the first read that finds one set but
// ignored prints one WARN naming it (unless the logger's start did), and
// the ENV line says "ignored".

// readTime is when a variable is read.
type readTime int

const (
	readInC readTime = iota
	atLoad
	atFirstUse
	atEveryCall
)

// The names, as the WARN texts spell them (kanga.EnvVar and
// ring.PodOrderEnvVar are their packages').
const (
	LayoutEnvVar    = "NCCOM_RING_LAYOUT"
	ABICheckEnvVar  = "NCCOM_RING_ABI_CHECK"
	procsEnvVar     = "NCCOM_RING_GOMAXPROCS"
	DumpEnvVar      = "NCCOM_RING_DUMP"
	NodeOrderEnvVar = "NCCOM_RING_NODE_ORDER"
	LocationEnvVar  = "NCCOM_RING_LOCATION"
)

// spec is a row of the registry but for its parser; alone, the row of a
// variable read in C.
type spec struct {
	name string
	path bool   // it names a file, a directory or a library: ignored under secure execution
	def  string // what is in effect when it is unset, as the ENV line says it
	when readTime
	// Its cells in docs/environment.md's table.
	values, unset, read string

	id C.int // its index in the registry, its id in C (zenv.h)
}

func (s *spec) row() *spec      { return s }
func (s *spec) loadNote() error { return nil }
func (s *spec) seen() (string, bool) {
	v := C.nccomring_env(s.id)
	if v == nil {
		return "", false
	}
	return C.GoString(v), true
}

// registry is every row, in the order of their ids, of docs/environment.md's
// table and of the ENV line (logVariables).
var registry []variable

// define appends v to the registry, its index its id. Go initializes the rows
// below in the order they are written, as none depends on another
// (TestEachRowGenerates checks each id).
func define[V variable](v V) V {
	v.row().id = C.int(len(registry))
	registry = append(registry, v)
	return v
}

var (
	_ = define(&spec{name: "NCCL_DEBUG", when: readInC,
		values: "`VERSION`, `WARN`, `INFO`, `ABORT`, `TRACE` (any case)",
		unset:  "unset: nothing is printed; the return code carries the error (D21); in libnccom's line form, WARN (D26)",
		read:   "once, at the first call of any export (the preload shim: at its first call that fails)",
	})
	_ = define(&spec{name: "NCCL_DEBUG_SUBSYS", when: readInC,
		values: "comma list of `INIT`, `COLL`, `P2P`, `SHM`, `NET`, `GRAPH`, `TUNING`, `ENV`, `ALLOC`, `CALL`, `ALL`; a leading `^` inverts",
		unset:  "`INIT,ENV`",
		read:   "as `NCCL_DEBUG`",
	})
	_ = define(&spec{name: "NCCL_DEBUG_FILE", path: true, when: readInC,
		values: "a path; `%h` is the host name, `%p` the pid, `%%` a `%`; see [operating.md](operating.md), \"Where the log lines go\"",
		unset:  "stdout (the preload shim: stderr)",
		read:   "as `NCCL_DEBUG`",
	})
	_ = define(&spec{name: "NCCOM_RING_LOG_STYLE", when: readInC,
		values: "`nccl`, `ccom` (any case): the form of the log lines ([operating.md](operating.md), \"The form of the log lines\"); `ccom` prints WARN lines without `NCCL_DEBUG`",
		unset:  "`ccom` when a libnccom is loaded in the process, else `nccl`",
		read:   "as `NCCL_DEBUG`",
	})
	_ = define(&spec{name: "NCCOMRING_LIBRARY", path: true, when: readInC,
		values: "a path (or a name the loader searches); ignored under secure execution",
		unset:  "`libnccomring.so.0` in the preload shim's directory",
		read:   "by the preload shim only, once, at its first call",
	})
	// An unknown value's WARN: warnUnknown; Postset's read: ring's
	// ownFacts, where an unknown value is generic.
	platformParam = define(&param[kanga.Platform]{parse: kanga.ParseEnv, spec: spec{
		name: kanga.EnvVar, def: "generic", when: atFirstUse,
		values: "`generic`, `trn3-switchv1` (any case); ignored when the host defines `neuronIsTrn3SwitchV1Family`. Another value does not fail Preset: the rank's record says its platform is unknown (one WARN per process, `docs/errors.md` S10) and every rank's Postset refuses the job (P6a, P6b, D28)",
		unset:  "`generic`",
		read:   "once, at the first Preset that finds no `neuronIsTrn3SwitchV1Family`, which carries the platform in the rank's record; a Postset reads it (and asks the hook) only when no fragment holds a valid record (D28)",
	}})
	// An invalid value is one WARN, then as unset; a pod job is stitched
	// in node order only when every rank's record says node (P8, P12).
	podOrderParam = define(&param[ring.PodOrder]{parse: ring.ParsePodOrder, spec: spec{
		name: ring.PodOrderEnvVar, def: "pods refused", when: atFirstUse,
		values: "`node`: stitch UltraServer pods in node order, when every rank says so (D27)",
		unset:  "unset: pods refused, Postset refuses `enablePod` on more than one node (D15)",
		read:   "once, at the first Preset, which carries it in the rank's record",
	}})
	// Read, with the file (layout.MaxProfileSize), by commlayout.go.
	layoutParam = define(&param[string]{parse: parsePath, spec: spec{
		name: LayoutEnvVar, path: true, def: "D3's offsets", when: atFirstUse,
		values: "a layout profile (`nccom-abi profile LIB`): where this job's libnccom keeps the ncclComm fields D3 assumes; a regular file (not a link) of at most 64 KiB, for the build mapped (its `buildId`), its fields within the 19212 bytes every host allocates (or within the mapped build's sizeof(ncclComm), from its DWARF: errors.md E4)",
		unset:  "unset: D3's offsets",
		read:   "once (the variable and the file), at the first call of any export",
	}})
	// Read by the self-check (selfcheck.go).
	abiCheckParam = define(&param[abiCheckMode]{parse: parseABICheck, spec: spec{
		name: ABICheckEnvVar, def: "enforce", when: atFirstUse,
		values: "`enforce`, `warn`, `off` (any case): compare the layout in use with the DWARF of the `libnccom.so.2` mapped in the process ([checking.md](checking.md), \"The same check inside the job\")",
		unset:  "`enforce`: refuse the exports that touch a struct that differs (E5)",
		read:   "once, at the first Preset, Postset or GetNetDev",
	}})
	// footprint.go, P25.
	procsParam = define(&param[int]{parse: parseProcs, spec: spec{
		name: procsEnvVar, def: strconv.Itoa(procsDefault), when: atLoad,
		values: "an integer 1..64 (larger is taken as 64, with a WARN): the processors of the library's own Go runtime ([operating.md](operating.md), \"A light guest\")",
		unset:  "`2`, whatever the cores or `GOMAXPROCS` say",
		read:   "once, when the library is loaded: the runtime's parallelism must be set before it starts threads (a bad value is one WARN at the first call)",
	}})
	// dump.go.
	dumpParam = define(&param[string]{parse: parsePath, spec: spec{
		name: DumpEnvVar, path: true, def: "no dumps", when: atEveryCall,
		values: "a directory: every rank's Postset writes its wiring dump there, GetNetDev adds its answers ([operating.md](operating.md), \"Per-rank wiring dumps\")",
		unset:  "unset: nothing is written",
		read:   "at every Postset and GetNetDev, so a host can set it for one communicator (a call pays one `getenv`)",
	}})
	nodeOrderParam = define(&param[bool]{parse: parseNodeOrder, spec: spec{
		name: NodeOrderEnvVar, def: "rank", when: atEveryCall,
		values: "`rank`, `network` (any case): join the nodes in the order of their locations (D25, `docs/node-order.md`) when every rank asks",
		unset:  "`rank`",
		read:   "at every Preset, which carries it in the rank's record (a bad value is one WARN, then `rank`)",
	}})
	// Postset only peeks at it (seen, no WARN) for the dump (dump.go's
	// orderOf, D28).
	locationParam = define(&param[nodeorder.Location]{parse: parseLocation, spec: spec{
		name: LocationEnvVar, def: "no location", when: atEveryCall,
		values: "where this rank's host sits: 1 to 8 names of `[A-Za-z0-9._:-]` separated by `/`, outermost first (`nccom-rings locate`)",
		unset:  "no location",
		read:   "at every Preset, which carries it in the rank's record (a bad value is one WARN, then none); Postset reads it only to name the location in the rank's dump (`NCCOM_RING_DUMP`), and then only when it hashes to the record's",
	}})
)

// parseNodeOrder: rank or network, any case; unset is rank.
func parseNodeOrder(value string, set bool) (bool, error) {
	switch strings.ToLower(value) {
	case "network":
		return true, nil
	case "rank", "":
		return false, nil
	}
	return false, fmt.Errorf("%s=%s is not rank or network; stitching this rank's nodes in rank order", NodeOrderEnvVar, quote.String(value))
}

// parseLocation: nodeorder.Parse's location; unset is none.
func parseLocation(value string, set bool) (nodeorder.Location, error) {
	if !set {
		return nodeorder.Location{}, nil
	}
	l, err := nodeorder.Parse(value)
	if err != nil {
		return nodeorder.Location{}, fmt.Errorf("%s=%v; this rank has no location", LocationEnvVar, err)
	}
	return l, nil
}

// parsePath takes any value: a path is checked by its use.
func parsePath(value string, set bool) (string, error) { return value, nil }

// parseABICheck: enforce, warn or off, any case; anything else is enforced,
// the safe reading of a typo.
func parseABICheck(value string, set bool) (abiCheckMode, error) {
	switch strings.ToLower(value) {
	case "warn":
		return abiWarn, nil
	case "off":
		return abiOff, nil
	case "enforce":
		return abiEnforce, nil
	}
	if set {
		return abiEnforce, fmt.Errorf("%s=%s is not one of enforce, warn, off; enforcing", ABICheckEnvVar, quote.String(value))
	}
	return abiEnforce, nil
}

const (
	procsDefault = 2
	procsMax     = 64 // a higher setting is taken as procsMax
)

// parseProcs: an integer from 1 to procsMax as it is; a larger one (even
// one too large for an int) is procsMax; unset or anything else,
// procsDefault.
func parseProcs(value string, set bool) (int, error) {
	if !set {
		return procsDefault, nil
	}
	n, err := strconv.Atoi(value)
	switch {
	case err == nil && n >= 1 && n <= procsMax:
		return n, nil
	case (err == nil && n > procsMax) || (errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(value, "-")):
		return procsMax, fmt.Errorf("%s=%s is more than %d; using %d", procsEnvVar, quote.String(value), procsMax, procsMax)
	}
	return procsDefault, fmt.Errorf("%s=%s is not a positive integer; using %d", procsEnvVar, quote.String(value), procsDefault)
}

// variable is a row of the registry, whatever its value's type.
type variable interface {
	row() *spec
	// seen is the value as the variable's reading found it, or, before it
	// is read (or when it is read at every call), as C's environment holds
	// it now: peeking does not read it for good. set is false when unset
	// or empty.
	seen() (value string, set bool)
	// loadNote is the parser's error of a variable read at load, for the
	// first call to print; nil for any other.
	loadNote() error
}

// param is a variable whose value in effect is a T.
type param[T any] struct {
	spec
	parse func(value string, set bool) (T, error)

	mu   sync.Mutex // serializes the reads that parse
	last atomic.Pointer[reading[T]]
}

// reading is one read of a variable: the value as set, and what its parser
// made of it.
type reading[T any] struct {
	raw   string
	set   bool
	value T
	err   error
}

// get returns the reading in effect, reading the variable when its row
// says: at the first get for a variable read once (atLoad's is its init),
// at every get for one read at every call. fresh reports whether this get
// parsed it: for a variable read once, the one get that did, where a WARN
// of its value is printed, once. Nothing is allocated unless the value is
// parsed.
func (p *param[T]) get() (r *reading[T], fresh bool) {
	r = p.last.Load()
	if r != nil && p.when != atEveryCall {
		return r, false
	}
	v := C.nccomring_env(p.id)
	if v == nil && secureExecution && p.path {
		p.warnIgnored()
	}
	if r != nil && r.holds(v) {
		return r, false
	}
	return p.read(v)
}

// secureExecution is whether the kernel started this process with
// AT_SECURE (env.h); it cannot change while the process runs.
var secureExecution = C.nccomring_secure() != 0

// warnIgnored prints the one WARN of a path-valued variable set but ignored
// under secure execution, unless it was printed already (the logger's
// start prints it for the variables set then).
func (s *spec) warnIgnored() {
	if C.nccomring_env_ignored_once(s.id) == 0 {
		return
	}
	var text [512]C.char
	C.nccomring_env_ignored_text(s.id, &text[0], C.size_t(len(text)))
	warn(-1, C.GoString(&text[0]))
}

// read parses v, the variable's value in C's environment (nil: unset),
// unless another get did so meanwhile.
func (p *param[T]) read(v *C.char) (*reading[T], bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.last.Load(); r != nil && (p.when != atEveryCall || r.holds(v)) {
		return r, false
	}
	r := &reading[T]{set: v != nil}
	if r.set {
		r.raw = C.GoString(v)
	}
	r.value, r.err = p.parse(r.raw, r.set)
	p.last.Store(r)
	return r, true
}

func (p *param[T]) seen() (string, bool) {
	if r := p.last.Load(); r != nil && p.when != atEveryCall {
		return r.raw, r.set
	}
	return p.spec.seen()
}

func (p *param[T]) loadNote() error {
	if r := p.last.Load(); r != nil && p.when == atLoad {
		return r.err
	}
	return nil
}

// holds reports whether v, a value in C's environment (nil: unset), is the
// one r was read from. It compares in place: no copy of v is made.
func (r *reading[T]) holds(v *C.char) bool {
	if v == nil || !r.set {
		return v == nil && !r.set
	}
	p := unsafe.Pointer(v)
	for i := 0; i < len(r.raw); i++ {
		if *(*byte)(unsafe.Add(p, i)) != r.raw[i] {
			return false // also where v ends first: raw holds no NUL
		}
	}
	return *(*byte)(unsafe.Add(p, len(r.raw))) == 0
}

// logVariables prints what the process's first call prints about the
// variables (enter): the WARN of each variable read at load whose value
// was not taken as given (logging starts at the first call), and, at
// NCCL_DEBUG=INFO with ENV in NCCL_DEBUG_SUBSYS, one line with the
// registry's values (variablesLine).
func logVariables(rank int32) {
	for _, v := range registry {
		if err := v.loadNote(); err != nil {
			warn(rank, err.Error())
		}
	}
	if infoEnabled(C.NCCOMRING_SUBSYS_ENV) {
		info(C.NCCOMRING_SUBSYS_ENV, rank, variablesLine())
	}
}

// variablesLine is the ENV line: each variable of the registry Go reads as
// NAME="VALUE" when set (quoted: package quote), else as "NAME unset
// (DEFAULT)", or "NAME ignored under secure execution (DEFAULT)" for a
// path set in a secure-execution process. A variable already
// read shows the value read; the others show what C's environment holds
// at the first call (each is read at its own time: atFirstUse and
// atEveryCall).
func variablesLine() string {
	var b strings.Builder
	b.WriteString("libnccomring environment: ")
	sep := ""
	for _, v := range registry {
		s := v.row()
		if s.when == readInC {
			continue
		}
		b.WriteString(sep)
		sep = ", "
		if value, set := v.seen(); set {
			b.WriteString(s.name + "=" + quote.String(value))
		} else if s.path && C.nccomring_env_ignored(s.id) != 0 {
			b.WriteString(s.name + " ignored under secure execution (" + s.def + ")")
		} else {
			b.WriteString(s.name + " unset (" + s.def + ")")
		}
	}
	return b.String()
}
