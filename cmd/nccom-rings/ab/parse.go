// Package ab is nccom-rings ab: the kit an operator runs on their own
// allocation to measure what the node order is worth (the two hostfiles
// and a run script, Script), and the reading of its outputs (Parse,
// Compare).
package ab

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// The two benchmarks the kit runs, as its output files name them.
const (
	NCCLTests = "nccl-tests" // NVIDIA's nccl-tests all_reduce_perf, under mpirun
	NccomTest = "nccom-test" // AWS Neuron's nccom-test allr
)

// Row is one message size of one run's table.
type Row struct {
	Bytes  int64
	TimeUS float64 // nccl-tests' out-of-place time; nccom-test's time(us) or time:avg(us)
	AlgBW  float64
	BusBW  float64 // nccl-tests' out-of-place busbw; nccom-test's busbw
	// InPlaceBusBW is nccl-tests' in-place busbw (0 for nccom-test).
	InPlaceBusBW float64
	// Wrong is nccl-tests' out-of-place #wrong ("0", "N/A"; older
	// releases print an error such as "2e-07" there), "" for nccom-test.
	Wrong string
	// Algorithm is nccom-test's algorithm column (--show-algorithm), ""
	// when the table has none.
	Algorithm string
}

// Output is one run's output file, read: which tool wrote it and its rows
// in the order printed (the first row of a size when a table repeats it).
type Output struct {
	Tool string
	Rows []Row
}

// Parse reads one run's output: nccl-tests' table (its header line
// "# size count type redop [root] time algbw busbw #wrong time algbw busbw
// #wrong", rows of as many fields) or nccom-test's (its header line
// "size(B) count(elems) type time(us) algbw(GB/s) busbw(GB/s)
// [algorithm]", with time:avg(us) and more time:pNN columns in newer
// releases). The tool is told by the header. Each line may carry a
// launcher's label before the table (srun --label's "0: ", Open MPI
// --tag-output's "[1,0]<stdout>:"): a row is read from a line's last
// fields. Lines that are neither header nor row (NCCL's INFO lines, a
// "..." an excerpt left) are skipped, and so is a row of 0 bytes, which
// has no bandwidth. An error: no header of either tool,
// no row, or nccom-test saying a run failed ("Failure running", "test
// failed"), whose line it names.
func Parse(data []byte) (*Output, error) {
	var out *Output
	var header []string
	seen := map[int64]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if h, tool := headerOf(line); h != nil {
			if out != nil && out.Tool != tool {
				return nil, fmt.Errorf("line %d: a %s table after a %s one", n, tool, out.Tool)
			}
			if out == nil {
				out = &Output{Tool: tool}
			}
			header = h
			continue
		}
		if out == nil {
			continue
		}
		if out.Tool == NccomTest && (strings.Contains(line, "Failure running") || strings.Contains(line, "test failed")) {
			return nil, fmt.Errorf("line %d: nccom-test reports a failure: %s", n, strings.TrimSpace(line))
		}
		fields := strings.Fields(line)
		if len(fields) < len(header) {
			continue
		}
		row, ok := rowOf(out.Tool, header, fields[len(fields)-len(header):])
		if !ok || seen[row.Bytes] {
			continue
		}
		seen[row.Bytes] = true
		out.Rows = append(out.Rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	switch {
	case out == nil:
		return nil, fmt.Errorf("no table of nccl-tests (a \"# size count type redop ... busbw\" header) or nccom-test (a \"size(B) ... busbw(GB/s)\" header)")
	case len(out.Rows) == 0:
		return nil, fmt.Errorf("a %s table without a row", out.Tool)
	}
	return out, nil
}

// headerOf is the column names of a table header line and its tool, nil
// when line is none. nccl-tests' header follows a '#' (after a launcher's
// label); nccom-test's begins with size(B).
func headerOf(line string) ([]string, string) {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		f := strings.Fields(line[i+1:])
		if len(f) > 0 && f[0] == "size" && index(f, "busbw", 0) >= 0 {
			return f, NCCLTests
		}
	}
	f := strings.Fields(line)
	for i, w := range f {
		if w == "size(B)" && index(f[i:], "busbw(GB/s)", 0) >= 0 {
			return f[i:], NccomTest
		}
	}
	return nil, ""
}

// index is the position of the (k+1)th name in header, -1 when it has
// fewer.
func index(header []string, name string, k int) int {
	for i, h := range header {
		if h == name {
			if k == 0 {
				return i
			}
			k--
		}
	}
	return -1
}

// rowOf reads the row whose fields match header one to one; false when
// they are not a row (a size that is no whole number, a number that is
// none).
func rowOf(tool string, header, fields []string) (Row, bool) {
	var r Row
	num := func(name string, k int) (float64, bool) {
		i := index(header, name, k)
		if i < 0 {
			return 0, false
		}
		v, err := strconv.ParseFloat(fields[i], 64)
		return v, err == nil
	}
	ok := true
	get := func(dst *float64, name string, k int) {
		v, good := num(name, k)
		*dst, ok = v, ok && good
	}
	size := "size"
	if tool == NccomTest {
		size = "size(B)"
	}
	b, err := strconv.ParseInt(fields[index(header, size, 0)], 10, 64)
	if err != nil || b <= 0 { // a 0-byte row has no bandwidth to compare
		return r, false
	}
	r.Bytes = b
	if tool == NCCLTests {
		get(&r.TimeUS, "time", 0)
		get(&r.AlgBW, "algbw", 0)
		get(&r.BusBW, "busbw", 0)
		get(&r.InPlaceBusBW, "busbw", 1)
		if i := index(header, "#wrong", 0); i >= 0 {
			r.Wrong = fields[i]
		} else if i := index(header, "error", 0); i >= 0 {
			r.Wrong = fields[i]
		}
		return r, ok
	}
	t := "time(us)"
	if index(header, t, 0) < 0 {
		t = "time:avg(us)"
	}
	if index(header, t, 0) >= 0 { // a table of only time:pNN columns has no one time
		get(&r.TimeUS, t, 0)
	}
	get(&r.AlgBW, "algbw(GB/s)", 0)
	get(&r.BusBW, "busbw(GB/s)", 0)
	if i := index(header, "algorithm", 0); i >= 0 {
		r.Algorithm = fields[i]
	}
	return r, ok
}
