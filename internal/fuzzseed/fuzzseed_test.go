package fuzzseed

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	bytesType  = reflect.TypeFor[[]byte]()
	stringType = reflect.TypeFor[string]()
	intType    = reflect.TypeFor[int]()
)

func TestGenerateIsFixed(t *testing.T) {
	types := []reflect.Type{bytesType, stringType, intType}
	seeds := [][]any{{[]byte("{\"rank\":1}"), "trn[001-004]", 3}, {[]byte{0, 1, 2}, "", -1}}
	a, err := Generate("FuzzX", types, seeds, 500)
	require.NoError(t, err)
	b, err := Generate("FuzzX", types, seeds, 500)
	require.NoError(t, err)
	require.Len(t, a, 500)
	assert.Equal(t, a, b, "the same name and seeds give other inputs")

	// The first inputs of a longer run are those of a shorter one: a
	// count set higher replays the same inputs and then more.
	c, err := Generate("FuzzX", types, seeds, 100)
	require.NoError(t, err)
	assert.Equal(t, a[:100], c)

	// Another target, another stream.
	d, err := Generate("FuzzY", types, seeds, 500)
	require.NoError(t, err)
	assert.NotEqual(t, a, d)
}

// A change to the generator changes what `make test` replays on every
// machine: this pins the start of one stream, to make such a change
// one that is seen and meant (update the values here with it).
func TestGeneratePinned(t *testing.T) {
	in, err := Generate("FuzzPinned", []reflect.Type{stringType}, [][]any{{"abc"}}, 3)
	require.NoError(t, err)
	var got []string
	for _, v := range in {
		got = append(got, v[0].(string))
	}
	t.Logf("%q", got)
	assert.Equal(t, pinned, got)
}

var pinned = []string{"aabc{0aabc", "aba", "acc\x9bM\x01-"}

func TestGenerateDiffersAndFits(t *testing.T) {
	types := []reflect.Type{bytesType, bytesType}
	seeds := [][]any{
		{[]byte("go test fuzz v1"), []byte{}},
		{[]byte("a"), []byte("b")},
		{"wrong type", []byte{}}, // left out: not the function's types
	}
	in, err := Generate("FuzzX", types, seeds, 300)
	require.NoError(t, err)
	require.Len(t, in, 300)
	seen := map[string]bool{key(seeds[0]): true, key(seeds[1]): true}
	for i, args := range in {
		require.True(t, fits(args, types), "input %d: %#v", i, args)
		k := key(args)
		require.False(t, seen[k], "input %d repeats a seed or an earlier input: %#v", i, args)
		seen[k] = true
		for _, a := range args {
			assert.LessOrEqual(t, len(a.([]byte)), 2*len("go test fuzz v1")+64)
		}
	}
}

// Most inputs keep most of their seed: mutations, not noise.
func TestGenerateKeepsTheSeed(t *testing.T) {
	seed := []byte(`{"format":1,"rank":0,"nRanks":2,"result":0,"resultName":"ncclSuccess"}`)
	in, err := Generate("FuzzX", []reflect.Type{bytesType}, [][]any{{seed}}, 200)
	require.NoError(t, err)
	close := 0
	for _, args := range in {
		if lcs(args[0].([]byte), seed) >= len(seed)*3/4 {
			close++
		}
	}
	assert.Greater(t, close, len(in)*3/4, "%d of %d inputs keep 3/4 of their seed", close, len(in))
}

// lcs is the length of the longest common subsequence of a and b.
func lcs(a, b []byte) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(cur[j], prev[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func TestGenerateWithoutSeeds(t *testing.T) {
	in, err := Generate("FuzzX", []reflect.Type{bytesType, intType, reflect.TypeFor[bool]()}, nil, 50)
	require.NoError(t, err)
	assert.Len(t, in, 50)

	// A bool alone has one neighbour: fewer inputs, not a hang.
	in, err = Generate("FuzzX", []reflect.Type{reflect.TypeFor[bool]()}, [][]any{{false}}, 50)
	require.NoError(t, err)
	assert.Equal(t, [][]any{{true}}, in)

	_, err = Generate("FuzzX", []reflect.Type{reflect.TypeFor[complex128]()}, nil, 1)
	assert.ErrorContains(t, err, "no mutation for complex128")
}

func TestMutateIntegers(t *testing.T) {
	in, err := Generate("FuzzX", []reflect.Type{reflect.TypeFor[int8](), reflect.TypeFor[uint32]()}, [][]any{{int8(5), uint32(7)}}, 100)
	require.NoError(t, err)
	near := 0
	for _, args := range in {
		if d := int(args[0].(int8)) - 5; d >= -3 && d <= 3 {
			near++
		}
	}
	assert.Greater(t, near, 30, "small steps are most integer mutations")
}

func TestFuzzing(t *testing.T) {
	fl := flag.Lookup("test.fuzz")
	require.NotNil(t, fl)
	was := fl.Value.String()
	defer fl.Value.Set(was)
	require.NoError(t, fl.Value.Set(""))
	assert.False(t, fuzzing("FuzzX"))
	require.NoError(t, fl.Value.Set("^FuzzX$"))
	assert.True(t, fuzzing("FuzzX"))
	assert.False(t, fuzzing("FuzzXY"), "another target runs its derived inputs")
	require.NoError(t, fl.Value.Set("Fuzz"))
	assert.True(t, fuzzing("FuzzXY"))
}

func TestCount(t *testing.T) {
	t.Setenv(CountEnv, "")
	n, err := Count()
	require.NoError(t, err)
	assert.Equal(t, DefaultCount, n)
	t.Setenv(CountEnv, "0")
	n, err = Count()
	require.NoError(t, err)
	assert.Equal(t, 0, n)
	t.Setenv(CountEnv, "many")
	_, err = Count()
	assert.ErrorContains(t, err, CountEnv)
	t.Setenv(CountEnv, "-1")
	_, err = Count()
	assert.Error(t, err)
}

func TestParseFile(t *testing.T) {
	args, err := ParseFile([]byte("go test fuzz v1\n[]byte(\"\\x00a\\\"\")\nstring(\"é\\n\")\nint(-3)\nbyte('\\xff')\nrune('x')\n" +
		"uint16(65535)\nint64(-9223372036854775808)\nbool(true)\nfloat64(-1.5)\nstring(`raw`)\n"))
	require.NoError(t, err)
	assert.Equal(t, []any{[]byte("\x00a\""), "é\n", -3, uint8(0xff), int32('x'), uint16(65535), int64(-1 << 63), true, -1.5, "raw"}, args)

	for _, bad := range []string{
		"go test fuzz v2\nint(1)\n",
		"go test fuzz v1\nint(\"1\")\n",
		"go test fuzz v1\nint8(300)\n",
		"go test fuzz v1\nmath.Float64frombits(1)\n",
		"go test fuzz v1\ncomplex128(1)\n",
		"go test fuzz v1\n[]byte(x)\n",
	} {
		_, err := ParseFile([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

// Every corpus file of the project reads: New fails a target on one that
// does not, and this says which before that.
func TestProjectCorpora(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "*", "testdata", "fuzz", "Fuzz*"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join("..", "..", "*", "*", "testdata", "fuzz", "Fuzz*"))
	require.NoError(t, err)
	dirs = append(dirs, more...)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		seeds, err := ReadDir(dir)
		require.NoError(t, err)
		assert.NotEmpty(t, seeds, dir)
	}
	none, err := ReadDir(filepath.Join(t.TempDir(), "absent"))
	require.NoError(t, err)
	assert.Empty(t, none)
}

// FuzzCorpus runs the helper end to end: the function sees the seeds,
// the corpus file, and Count() derived inputs, each once.
func FuzzCorpus(f *testing.F) {
	dir := filepath.Join("testdata", "fuzz", "FuzzCorpus")
	seeds, err := ReadDir(dir)
	if err != nil || len(seeds) != 1 {
		f.Fatalf("%s: %d files, %v", dir, len(seeds), err)
	}
	c := New(f)
	c.Add([]byte("seed"), 7)
	c.Add([]byte{}, -1)
	runs := map[string]int{}
	c.Fuzz(func(t *testing.T, b []byte, n int) {
		runs[key([]any{b, n})]++
	})
	if flag.Lookup("test.fuzz").Value.String() != "" {
		return // fuzzing: the function runs in workers, counted there
	}
	n, err := Count()
	if err != nil {
		f.Fatal(err)
	}
	if fuzzing(f.Name()) {
		f.Fatal("not fuzzing, yet fuzzing() says so")
	}
	if os.Getenv(CountEnv) == "" && n != DefaultCount {
		f.Fatalf("Count() %d without %s, want %d", n, CountEnv, DefaultCount)
	}
	total := 0
	for k, r := range runs {
		if r != 1 {
			f.Errorf("input %s ran %d times", k, r)
		}
		total += r
	}
	// With -run selecting some entries (FuzzCorpus/seed#3) fewer run.
	if !strings.Contains(flag.Lookup("test.run").Value.String(), "/") {
		if want := 3 + n; total != want {
			f.Errorf("%d inputs ran, want the 3 seeds and %d derived", total, n)
		}
		for _, s := range [][]any{{[]byte("seed"), 7}, {[]byte{}, -1}, seeds[0]} {
			if runs[key(s)] != 1 {
				f.Errorf("seed %#v did not run", s)
			}
		}
	}
}
