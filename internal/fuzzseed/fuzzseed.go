// Package fuzzseed makes a Go fuzz target worth running as an ordinary
// test (issue 32). Under plain `go test` a target runs only its seed
// corpus; open-ended fuzzing (`go test -fuzz`) is a race against Go's
// coordinator and the clock, which a busy machine loses, so `make test`
// replays instead: the seeds and a fixed number of inputs derived from
// them by a generator with a fixed seed. The same inputs run on every
// run and every machine, and a failure names its input (FuzzX/seed#K, the
// K-th f.Add), which `go test -run 'FuzzX/seed#K'` runs again.
//
// A target records its seeds through a Corpus instead of f directly:
//
//	c := fuzzseed.New(f) // also reads testdata/fuzz/FuzzX
//	c.Add(seed...)
//	c.Fuzz(func(t *testing.T, ...) { ... })
//
// Fuzz adds Count() inputs with f.Add, then calls f.Fuzz; not when this
// target is the one `go test -fuzz` fuzzes: Go's fuzzer keeps every seed
// in its corpus for good, so it would gather coverage over a thousand
// near-copies of the seeds first (some 3 s a target) and then share its
// rounds among them, where its own mutations are guided by coverage.
package fuzzseed

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The one place the replay is set. Seed fixes the generator (each target
// also mixes in its own name, so targets get different streams); a new
// Seed gives a new, equally fixed, set of inputs. DefaultCount is how
// many inputs each target gets (`make fuzz` lists the targets); ten times
// as many cover a point or two more of the code. The environment variable
// CountEnv overrides it, e.g. NCCOMRING_FUZZ_SEEDED=20000 for a longer
// replay, 0 for the seeds alone.
const (
	Seed         uint64 = 0x6e63636f6d_0032 // "nccom", issue 32
	DefaultCount        = 1000
	CountEnv            = "NCCOMRING_FUZZ_SEEDED"
)

// Corpus is a fuzz target's seeds, kept to derive more from.
type Corpus struct {
	f     *testing.F
	seeds [][]any
}

// New returns f's corpus, with the files of testdata/fuzz/<target> (Go
// runs those itself; they are read here only to derive inputs from).
func New(f *testing.F) *Corpus {
	f.Helper()
	c := &Corpus{f: f}
	seeds, err := ReadDir(filepath.Join("testdata", "fuzz", f.Name()))
	if err != nil {
		f.Fatalf("fuzzseed: %v", err)
	}
	c.seeds = seeds
	return c
}

// Add is f.Add, remembered.
func (c *Corpus) Add(args ...any) {
	c.f.Helper()
	c.f.Add(args...)
	c.seeds = append(c.seeds, args)
}

// Fuzz adds the derived inputs, then runs fn as f.Fuzz does.
func (c *Corpus) Fuzz(fn any) {
	c.f.Helper()
	n, err := Count()
	if err != nil {
		c.f.Fatal(err)
	}
	ft := reflect.TypeOf(fn)
	if ft == nil || ft.Kind() != reflect.Func || ft.NumIn() < 2 {
		c.f.Fatalf("fuzzseed: %T is not a fuzz function", fn)
	}
	types := make([]reflect.Type, ft.NumIn()-1)
	for i := range types {
		types[i] = ft.In(i + 1)
	}
	if fuzzing(c.f.Name()) {
		n = 0
	}
	inputs, err := Generate(c.f.Name(), types, c.seeds, n)
	if err != nil {
		c.f.Fatal(err)
	}
	for _, in := range inputs {
		c.f.Add(in...)
	}
	c.f.Fuzz(fn)
}

// fuzzing tells whether go test's -fuzz names the target (testing has no
// call that says so; the flag is the documented -test.fuzz).
func fuzzing(name string) bool {
	fl := flag.Lookup("test.fuzz")
	if fl == nil || fl.Value.String() == "" {
		return false
	}
	ok, err := regexp.MatchString(fl.Value.String(), name)
	return ok || err != nil
}

// Count is how many inputs Fuzz derives: DefaultCount, or CountEnv's.
func Count() (int, error) {
	s, ok := os.LookupEnv(CountEnv)
	if !ok || s == "" {
		return DefaultCount, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("fuzzseed: %s=%q: want a count, 0 or more", CountEnv, s)
	}
	return n, nil
}

// Generate derives n inputs of the given argument types from the seeds
// (those of other types are left out; with none left, the zero values
// stand in). Each is a seed with one to four mutations, none is a seed
// and none repeats: the same name, seeds and n give the same inputs.
func Generate(name string, types []reflect.Type, seeds [][]any, n int) ([][]any, error) {
	var parents [][]any
	for _, s := range seeds {
		if fits(s, types) {
			parents = append(parents, s)
		}
	}
	if len(parents) == 0 {
		zero := make([]any, len(types))
		for i, t := range types {
			if t.Kind() == reflect.Slice {
				zero[i] = reflect.MakeSlice(t, 0, 0).Interface()
			} else {
				zero[i] = reflect.Zero(t).Interface()
			}
		}
		parents = [][]any{zero}
	}
	for i, t := range types {
		if _, err := mutate(nil, reflect.Zero(t).Interface(), nil); err != nil {
			return nil, fmt.Errorf("fuzzseed: %s: argument %d: %v", name, i+1, err)
		}
	}
	// Per argument: the seeds' values to splice from, and a bound on
	// length, so that stacked inserts cannot grow an input without end.
	pool := make([][][]byte, len(types))
	limit := make([]int, len(types))
	for i := range types {
		for _, p := range parents {
			if b, ok := asBytes(p[i]); ok {
				pool[i] = append(pool[i], b)
				limit[i] = max(limit[i], 2*len(b)+64)
			}
		}
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	rng := rand.New(rand.NewPCG(Seed, h.Sum64()))
	seen := map[string]bool{}
	for _, p := range parents {
		seen[key(p)] = true
	}
	out := make([][]any, 0, n)
	// A cap on attempts, for seeds with few neighbours (one bool): the
	// inputs are then fewer than n rather than a loop without end.
	for tries := 0; len(out) < n && tries < 20*n+100; tries++ {
		child := append([]any(nil), parents[rng.IntN(len(parents))]...)
		for range 1 + rng.IntN(4) {
			i := rng.IntN(len(child))
			v, err := mutate(rng, child[i], pool[i])
			if err != nil {
				return nil, err
			}
			if b, ok := asBytes(v); ok && len(b) > limit[i] {
				v = setBytes(v, b[:limit[i]])
			}
			child[i] = v
		}
		if k := key(child); !seen[k] {
			seen[k] = true
			out = append(out, child)
		}
	}
	return out, nil
}

// fits tells whether a seed has the fuzz function's argument types.
func fits(seed []any, types []reflect.Type) bool {
	if len(seed) != len(types) {
		return false
	}
	for i, v := range seed {
		if reflect.TypeOf(v) != types[i] {
			return false
		}
	}
	return true
}

// key tells inputs apart (%#v keeps the types: int(1) is not int8(1)).
func key(args []any) string {
	var sb strings.Builder
	for _, a := range args {
		fmt.Fprintf(&sb, "%T %#v\n", a, a)
	}
	return sb.String()
}

func asBytes(v any) ([]byte, bool) {
	switch v := v.(type) {
	case []byte:
		return v, true
	case string:
		return []byte(v), true
	}
	return nil, false
}

// setBytes returns b as v's type.
func setBytes(v any, b []byte) any {
	if _, ok := v.(string); ok {
		return string(b)
	}
	return b
}

// mutate returns v changed once, by its type: the bytes of a []byte or a
// string; a small step, a flipped bit or zero for a number; a bool
// flipped. With a nil rng it only says whether the type is one it knows.
func mutate(rng *rand.Rand, v any, pool [][]byte) (any, error) {
	if rng == nil {
		switch v.(type) {
		case []byte, string, bool, int, int8, int16, int32, int64,
			uint, uint8, uint16, uint32, uint64, float32, float64:
			return v, nil
		}
		return nil, fmt.Errorf("fuzzseed: no mutation for %T", v)
	}
	switch v := v.(type) {
	case []byte:
		return mutateBytes(rng, bytes.Clone(v), pool), nil
	case string:
		return string(mutateBytes(rng, []byte(v), pool)), nil
	case bool:
		return !v, nil
	case int:
		return perturb(rng, v, 64), nil
	case int8:
		return perturb(rng, v, 8), nil
	case int16:
		return perturb(rng, v, 16), nil
	case int32:
		return perturb(rng, v, 32), nil
	case int64:
		return perturb(rng, v, 64), nil
	case uint:
		return perturb(rng, v, 64), nil
	case uint8:
		return perturb(rng, v, 8), nil
	case uint16:
		return perturb(rng, v, 16), nil
	case uint32:
		return perturb(rng, v, 32), nil
	case uint64:
		return perturb(rng, v, 64), nil
	case float32:
		return float32(perturbFloat(rng, float64(v))), nil
	case float64:
		return perturbFloat(rng, v), nil
	}
	return nil, fmt.Errorf("fuzzseed: no mutation for %T", v)
}

type integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// perturb moves an integer a little (a count or an index off by a few is
// where bounds checks are), or flips one of its bits (the top one gives
// the extremes), or sets it to zero.
func perturb[T integer](rng *rand.Rand, v T, bits int) T {
	switch rng.IntN(4) {
	case 0, 1:
		d := T(1 + rng.IntN(3))
		if rng.IntN(2) == 0 {
			return v + d
		}
		return v - d
	case 2:
		return v ^ T(1)<<rng.IntN(bits)
	}
	if v == 0 {
		return v - 1
	}
	return 0
}

func perturbFloat(rng *rand.Rand, v float64) float64 {
	switch rng.IntN(4) {
	case 0:
		return v + float64(1+rng.IntN(3))
	case 1:
		return -v
	case 2:
		return v * 2
	}
	if v == 0 {
		return 1
	}
	return 0
}

// interesting are byte values parsers and decoders treat specially: the
// ends of the signed and unsigned ranges, and the characters of JSON, of
// hostlists and of line-based formats.
var interesting = []byte{0x00, 0x01, 0x02, 0x7f, 0x80, 0xfe, 0xff,
	'\n', '\r', '\t', ' ', '"', '\\', '[', ']', '{', '}', ',', ':', '-', '0', '9', '#', '='}

// mutateBytes changes b once. The mutations keep most of a valid seed,
// so the result gets past the first checks of what reads it.
func mutateBytes(rng *rand.Rand, b []byte, pool [][]byte) []byte {
	op := rng.IntN(8)
	if len(b) == 0 {
		op = 1 // only an insert changes an empty input
	}
	switch op {
	case 0: // flip a bit
		b[rng.IntN(len(b))] ^= 1 << rng.IntN(8)
	case 1: // insert one to eight bytes, random or interesting
		ins := make([]byte, 1+rng.IntN(8))
		for i := range ins {
			if rng.IntN(2) == 0 {
				ins[i] = byte(rng.Uint32())
			} else {
				ins[i] = interesting[rng.IntN(len(interesting))]
			}
		}
		at := rng.IntN(len(b) + 1)
		b = append(b[:at], append(ins, b[at:]...)...)
	case 2: // delete a run
		i, j := span(rng, len(b))
		b = append(b[:i], b[j:]...)
	case 3: // duplicate a run somewhere else
		i, j := span(rng, len(b))
		run := bytes.Clone(b[i:j])
		at := rng.IntN(len(b) + 1)
		b = append(b[:at], append(run, b[at:]...)...)
	case 4: // splice: this one's head, another seed's tail
		other := pool[rng.IntN(len(pool))]
		cut, from := rng.IntN(len(b)+1), rng.IntN(len(other)+1)
		b = append(b[:cut], other[from:]...)
	case 5: // set a byte to an interesting value
		b[rng.IntN(len(b))] = interesting[rng.IntN(len(interesting))]
	case 6: // small arithmetic on a byte (a count, an index, a digit)
		d := byte(1 + rng.IntN(4))
		if rng.IntN(2) == 0 {
			d = -d
		}
		b[rng.IntN(len(b))] += d
	case 7: // copy one byte over another (a field's value into another)
		b[rng.IntN(len(b))] = b[rng.IntN(len(b))]
	}
	return b
}

// span picks a run [i, j) of one to sixteen bytes, or a quarter of n.
func span(rng *rand.Rand, n int) (int, int) {
	l := 1 + rng.IntN(max(16, n/4))
	l = min(l, n)
	i := rng.IntN(n - l + 1)
	return i, i + l
}

// ReadDir reads a directory of Go's corpus files (`go test fuzz v1`), in
// name order; a missing directory has none.
func ReadDir(dir string) ([][]any, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out [][]any
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		args, err := ParseFile(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		out = append(out, args)
	}
	return out, nil
}

// ParseFile reads one corpus file: the header line, then a Go
// conversion a line, such as []byte("..."), string("..."), int(-3),
// byte('x') or bool(true). Go's encoding of a NaN or of a float by its
// bits is not read: no target here takes floats.
func ParseFile(data []byte) ([]any, error) {
	lines := strings.Split(string(data), "\n")
	if strings.TrimSpace(lines[0]) != "go test fuzz v1" {
		return nil, fmt.Errorf("not a corpus file (first line %q)", lines[0])
	}
	var args []any
	for n, line := range lines[1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		v, err := parseValue(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n+2, err)
		}
		args = append(args, v)
	}
	return args, nil
}

func parseValue(line string) (any, error) {
	expr, err := parser.ParseExpr(line)
	if err != nil {
		return nil, err
	}
	call, ok := expr.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, fmt.Errorf("%q is not a conversion", line)
	}
	var typ string
	switch fun := call.Fun.(type) {
	case *ast.Ident:
		typ = fun.Name
	case *ast.ArrayType:
		if elt, ok := fun.Elt.(*ast.Ident); ok && fun.Len == nil && elt.Name == "byte" {
			typ = "[]byte"
		}
	}
	if typ == "bool" {
		if id, ok := call.Args[0].(*ast.Ident); ok && (id.Name == "true" || id.Name == "false") {
			return id.Name == "true", nil
		}
		return nil, fmt.Errorf("%q is not a bool", line)
	}
	arg, neg := call.Args[0], ""
	if u, ok := arg.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		arg, neg = u.X, "-"
	}
	lit, ok := arg.(*ast.BasicLit)
	if !ok {
		return nil, fmt.Errorf("%q: the value is not a literal", line)
	}
	text := neg + lit.Value
	if lit.Kind == token.CHAR {
		if neg != "" {
			return nil, fmt.Errorf("%q: a negative character", line)
		}
		r, _, tail, err := strconv.UnquoteChar(lit.Value[1:len(lit.Value)-1], '\'')
		if err != nil || tail != "" {
			return nil, fmt.Errorf("%q: bad character literal", line)
		}
		text = strconv.Itoa(int(r))
	}
	signed := func(bits int) (int64, error) { return strconv.ParseInt(text, 0, bits) }
	unsigned := func(bits int) (uint64, error) { return strconv.ParseUint(text, 0, bits) }
	var v any
	switch typ {
	case "[]byte", "string":
		if lit.Kind != token.STRING {
			return nil, fmt.Errorf("%q: want a string literal", line)
		}
		var s string
		if s, err = strconv.Unquote(lit.Value); err == nil {
			v = s
			if typ == "[]byte" {
				v = []byte(s)
			}
		}
	case "int":
		var x int64
		x, err = signed(64)
		v = int(x)
	case "int8":
		var x int64
		x, err = signed(8)
		v = int8(x)
	case "int16":
		var x int64
		x, err = signed(16)
		v = int16(x)
	case "int32", "rune":
		var x int64
		x, err = signed(32)
		v = int32(x)
	case "int64":
		v, err = signed(64)
	case "uint":
		var x uint64
		x, err = unsigned(64)
		v = uint(x)
	case "uint8", "byte":
		var x uint64
		x, err = unsigned(8)
		v = uint8(x)
	case "uint16":
		var x uint64
		x, err = unsigned(16)
		v = uint16(x)
	case "uint32":
		var x uint64
		x, err = unsigned(32)
		v = uint32(x)
	case "uint64":
		v, err = unsigned(64)
	case "float32", "float64":
		var x float64
		x, err = strconv.ParseFloat(text, 64)
		v = x
		if typ == "float32" {
			v = float32(x)
		}
	default:
		return nil, fmt.Errorf("%q: no reading for this type", line)
	}
	if err != nil {
		return nil, fmt.Errorf("%q: %v", line, err)
	}
	return v, nil
}
