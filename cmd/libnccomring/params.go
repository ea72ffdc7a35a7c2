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

// The registry of the library's own environment variables (issue 20), as
// NCCL_PARAM is libnccom's: one row per variable, below, with its name,
// what its value is, its default, its parser and when it is read. Every
// reader of one of these variables goes through its row; a new variable
// is a new row here, an id in env.h and a name in env.c's table (the test
// checks the two tables agree), a line in docs/environment.md's table.
//
// A variable is read from C's environment (env.c's nccomring_env, whose
// getenv sees a host's setenv after load) at the time its row says:
//
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
// Secure execution (env.h, docs/security.md): in a set-user-ID,
// set-group-ID or file-capability process (AT_SECURE) every path-valued
// row (pathValue: env.c's NCCOMRING_ENV_PATH) reads as unset, as C's
// reader returns it, and the first read that finds one set but ignored
// prints one WARN naming it (unless the logger's start printed it
// already); the ENV line says "ignored".
//
// The variables of the logger (NCCL_DEBUG, NCCL_DEBUG_SUBSYS,
// NCCL_DEBUG_FILE, and NCCOM_RING_LOG_STYLE, D26: nccl or ccom, else the
// style a loaded libnccom implies) and of the preload shim
// (NCCOMRING_LIBRARY) are read in C, through env.c's table too, and
// documented beside these in docs/environment.md. The logger's are read once per
// process, at the first call of any export, before Go is entered
// (log.c's nccomring_log_init); the shim's once, at its first call.

// readTime is when a variable is read.
type readTime int

const (
	atLoad readTime = iota
	atFirstUse
	atEveryCall
)

// valueKind is what a variable's value is.
type valueKind int

const (
	wordValue    valueKind = iota // one of a few words, any case
	integerValue                  // a decimal integer
	pathValue                     // a file or directory: env.c's NCCOMRING_ENV_PATH
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

// The registry, in the order of docs/environment.md's table and of the ENV line
// (logVariables).
var (
	// Read at the first Preset whose host defines no
	// neuronIsTrn3SwitchV1Family (D14), which carries the platform in the
	// rank's record. An unknown value does not fail Preset: one WARN per
	// process (warnUnknown, docs/errors.md S10), the record says
	// "unknown", and every rank's Postset refuses the job (P6a, P6b,
	// D28). Postset reads it, and calls the platform hook, only when no
	// fragment holds a valid record (ring's ownFacts; an unknown value is
	// generic there).
	platformParam = &param[kanga.Platform]{
		spec:  spec{C.NCCOMRING_ENV_PLATFORM, kanga.EnvVar, wordValue, "generic", atFirstUse},
		parse: kanga.ParseEnv,
	}
	// Read at the first Preset, which carries it in the rank's record
	// (D15, D27, P8); an invalid value is one WARN, then as unset. Postset
	// never reads it: a pod job is stitched in node order only when every
	// rank's record says node (docs/errors.md P12).
	podOrderParam = &param[ring.PodOrder]{
		spec:  spec{C.NCCOMRING_ENV_POD_ORDER, ring.PodOrderEnvVar, wordValue, "pods refused", atFirstUse},
		parse: ring.ParsePodOrder,
	}
	// A layout profile; read, with the file (no link followed, a regular
	// file of at most layout.MaxProfileSize bytes, for the libnccom.so.2
	// mapped), at the first call of any export (commlayout.go; a bad
	// profile is E4 at every call).
	layoutParam = &param[string]{
		spec:  spec{C.NCCOMRING_ENV_LAYOUT, LayoutEnvVar, pathValue, "D3's offsets", atFirstUse},
		parse: parsePath,
	}
	// Read at the first Preset, Postset or GetNetDev, which runs the
	// self-check (selfcheck.go, E5); an unknown value is one WARN, then
	// enforce.
	abiCheckParam = &param[abiCheckMode]{
		spec:  spec{C.NCCOMRING_ENV_ABI_CHECK, ABICheckEnvVar, wordValue, "enforce", atFirstUse},
		parse: parseABICheck,
	}
	// The library's Go runtime's processors (footprint.go, P25); read at
	// load, before the runtime starts threads for a call.
	procsParam = &param[int]{
		spec:  spec{C.NCCOMRING_ENV_GOMAXPROCS, procsEnvVar, integerValue, strconv.Itoa(procsDefault), atLoad},
		parse: parseProcs,
	}
	// Where the wiring dumps go (dump.go); read at every Postset and
	// GetNetDev, so that a host can set it for one communicator.
	dumpParam = &param[string]{
		spec:  spec{C.NCCOMRING_ENV_DUMP, DumpEnvVar, pathValue, "no dumps", atEveryCall},
		parse: parsePath,
	}
	// The inter-node order this rank asks for (D25), read at every Preset,
	// which carries it in the rank's record: rank or network; anything
	// else is one WARN, then rank. Postset never reads it.
	nodeOrderParam = &param[bool]{
		spec:  spec{C.NCCOMRING_ENV_NODE_ORDER, NodeOrderEnvVar, wordValue, "rank", atEveryCall},
		parse: parseNodeOrder,
	}
	// Where this rank sits (D25), read at every Preset, which carries its
	// names' hashes in the rank's record: 1 to 8 names separated by '/';
	// anything else is one WARN, then no location. Postset only peeks at
	// it (seen, no WARN) to name the location in a dump, when it hashes to
	// the record's (dump.go's orderOf, D28).
	locationParam = &param[nodeorder.Location]{
		spec:  spec{C.NCCOMRING_ENV_LOCATION, LocationEnvVar, wordValue, "no location", atEveryCall},
		parse: parseLocation,
	}
)

var registry = [...]variable{platformParam, podOrderParam, layoutParam, abiCheckParam, procsParam, dumpParam,
	nodeOrderParam, locationParam}

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

// spec is a row of the registry but for its parser.
type spec struct {
	id   C.int  // the variable's row in env.c's table, where C reads it
	name string // as env.c spells it
	kind valueKind
	def  string // what is in effect when it is unset, as the ENV line says it
	when readTime
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

func (p *param[T]) row() *spec { return &p.spec }

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
	if v == nil && secureExecution && p.kind == pathValue {
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
	v := C.nccomring_env(p.id)
	if v == nil {
		return "", false
	}
	return C.GoString(v), true
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

// variablesLine is the ENV line: each variable of the registry as
// NAME="VALUE" when set (quoted: package quote), else as "NAME unset
// (DEFAULT)", or "NAME ignored under secure execution (DEFAULT)" for a
// path set in a secure-execution process. A variable already
// read shows the value read; the others show what C's environment holds
// at the first call (each is read at its own time: atFirstUse and
// atEveryCall).
func variablesLine() string {
	var b strings.Builder
	b.WriteString("libnccomring environment: ")
	for i, v := range registry {
		if i > 0 {
			b.WriteString(", ")
		}
		s := v.row()
		if value, set := v.seen(); set {
			b.WriteString(s.name + "=" + quote.String(value))
		} else if s.kind == pathValue && C.nccomring_env_ignored(s.id) != 0 {
			b.WriteString(s.name + " ignored under secure execution (" + s.def + ")")
		} else {
			b.WriteString(s.name + " unset (" + s.def + ")")
		}
	}
	return b.String()
}

// envTableRow is env.c's row id: the name and whether it is path-valued
// (for the test, which cannot use cgo).
func envTableRow(id int) (name string, path, ok bool) {
	if id < 0 || id >= C.NCCOMRING_ENV_COUNT {
		return "", false, false
	}
	row := C.nccomring_env_vars[id]
	return C.GoString(row.name), row.attrs&C.NCCOMRING_ENV_PATH != 0, true
}
