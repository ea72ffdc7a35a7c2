package ab

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Run is one run's output file, read, with what its name says.
type Run struct {
	File    string
	Variant string // "A" or "B"
	Repeat  int
	Output  *Output
}

// PredictedPair is simulate's prediction for A's and B's order at one
// size, algorithm and oversubscription, in the tool's unit.
type PredictedPair struct {
	Algorithm        string  `json:"algorithm"`
	Oversubscription string  `json:"oversubscription"`
	A                float64 `json:"a"`
	B                float64 `json:"b"`
	Ratio            float64 `json:"ratio"` // B / A
	// Inside says the predicted B/A lies within the measured one's range
	// (RatioRange): the runs cannot tell it from what they measured.
	Inside bool `json:"inside"`
}

// SizeResult is one message size of one tool: each variant's spread and
// the judgement.
type SizeResult struct {
	Bytes    int64   `json:"bytes"`
	A        Spread  `json:"a"`
	B        Spread  `json:"b"`
	Ratio    float64 `json:"ratio"`    // B's median / A's
	RatioMin float64 `json:"ratioMin"` // B's min / A's max
	RatioMax float64 `json:"ratioMax"` // B's max / A's min
	Verdict  string  `json:"verdict"`  // NoDifference, BFaster, BSlower or TooFewRuns (with counts)
	// Algorithm is the one the tool reported (nccom-test
	// --show-algorithm), else the one the size likely used (Likely).
	Algorithm       string          `json:"algorithm"`
	AlgorithmSource string          `json:"algorithmSource"` // "reported" or "likely"
	Predicted       []PredictedPair `json:"predicted"`
}

// ToolResult is what one tool's runs measured.
type ToolResult struct {
	Tool   string       `json:"tool"`
	Unit   string       `json:"unit"`   // of every bandwidth of its sizes
	Metric string       `json:"metric"` // which column
	RunsA  int          `json:"runsA"`
	RunsB  int          `json:"runsB"`
	Sizes  []SizeResult `json:"sizes"`
}

// Compare gathers runs by tool and size and judges each size (Judge).
// ranksPerNode (0 when unknown) chooses the likely algorithm; pred, when
// not nil, gives each size its predictions (PredictedOrder pairs them).
// measurable counts the sizes judged BFaster or BSlower.
func Compare(runs []Run, ranksPerNode int, pred *Predictions) (tools []ToolResult, measurable int) {
	runs = slices.Clone(runs)
	slices.SortStableFunc(runs, func(x, y Run) int { return x.Repeat - y.Repeat })
	for _, tool := range []string{NCCLTests, NccomTest} {
		tr := ToolResult{Tool: tool, Unit: Unit(tool), Metric: "busbw"}
		if tool == NCCLTests {
			tr.Metric = "out-of-place busbw"
		}
		values := map[string]map[int64][]float64{"A": {}, "B": {}}
		algorithms := map[int64][]string{}
		var sizes []int64
		for _, r := range runs {
			if r.Output.Tool != tool {
				continue
			}
			if r.Variant == "A" {
				tr.RunsA++
			} else {
				tr.RunsB++
			}
			for _, row := range r.Output.Rows {
				if !slices.Contains(sizes, row.Bytes) {
					sizes = append(sizes, row.Bytes)
				}
				values[r.Variant][row.Bytes] = append(values[r.Variant][row.Bytes], row.BusBW)
				if row.Algorithm != "" && !slices.Contains(algorithms[row.Bytes], row.Algorithm) {
					algorithms[row.Bytes] = append(algorithms[row.Bytes], row.Algorithm)
				}
			}
		}
		if tr.RunsA+tr.RunsB == 0 {
			continue
		}
		slices.Sort(sizes)
		for _, size := range sizes {
			s := SizeResult{Bytes: size, A: NewSpread(values["A"][size]), B: NewSpread(values["B"][size])}
			s.Ratio = Ratio(s.A, s.B)
			s.RatioMin, s.RatioMax = RatioRange(s.A, s.B)
			s.Verdict = Verdict(s.A, s.B)
			if v := Judge(s.A, s.B); v == BFaster || v == BSlower {
				measurable++
			}
			if algs := algorithms[size]; len(algs) > 0 {
				s.Algorithm, s.AlgorithmSource = strings.Join(algs, "/"), "reported"
			} else {
				s.Algorithm, s.AlgorithmSource = Likely(tool, size, ranksPerNode), "likely"
			}
			s.Predicted = predicted(pred, tool, s)
			tr.Sizes = append(tr.Sizes, s)
		}
		tools = append(tools, tr)
	}
	return tools, measurable
}

// predicted pairs simulate's all-reduce rows of s's size: A's order and
// B's, by algorithm and oversubscription, in the order the file gives
// them; nil without predictions.
func predicted(pred *Predictions, tool string, s SizeResult) []PredictedPair {
	if pred == nil {
		return nil
	}
	type key struct{ alg, over string }
	var keys []key
	rows := map[string]map[key]float64{"A": {}, "B": {}}
	for _, p := range pred.Predictions {
		if p.Bytes != s.Bytes || p.Collective != "allreduce" {
			continue
		}
		for _, v := range []string{"A", "B"} {
			if p.Order == PredictedOrder(v) {
				k := key{p.Algorithm, p.Oversubscription}
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
				rows[v][k] = ToolUnit(tool, p.BusbwGbps)
			}
		}
	}
	var pairs []PredictedPair
	for _, k := range keys {
		a, okA := rows["A"][k]
		b, okB := rows["B"][k]
		if !okA || !okB {
			continue
		}
		pp := PredictedPair{Algorithm: k.alg, Oversubscription: k.over, A: a, B: b}
		if a > 0 {
			pp.Ratio = b / a
		}
		pp.Inside = s.RatioMax > 0 && pp.Ratio >= s.RatioMin && pp.Ratio <= s.RatioMax
		pairs = append(pairs, pp)
	}
	return pairs
}

// Likely is the algorithm a size likely ran with, from the tools' public
// documentation, for when the output does not say:
//   - nccl-tests: NCCL's tuner chooses ring or tree per size; NCCL_ALGO=Ring
//     forces the ring (NCCL's environment variables).
//   - nccom-test: Neuron's "Inter-node Collective Communication" page:
//     groups of several ranks a node run the Hierarchical algorithm
//     (intra-node stages around an inter-node one), and Flat Ring runs
//     "only on Trn1 for large message size cases"; one rank a node runs
//     Ring for large messages, RDH for small-to-medium and Mesh for small.
//     Where small ends is not published: the thresholds here, 1 MiB and
//     32 MiB, come from the guide's --show-algorithm sample (mesh up to
//     128 KiB, rdh at 2 MiB, kangaring from 32 MiB). ranksPerNode 0
//     (unknown) is taken as several.
func Likely(tool string, bytes int64, ranksPerNode int) string {
	if tool == NCCLTests {
		return "ring or tree (NCCL's choice)"
	}
	const large, medium = 32 << 20, 1 << 20
	switch {
	case ranksPerNode != 1 && bytes >= large:
		return "hierarchical, or flat ring on Trn1"
	case ranksPerNode != 1:
		return "hierarchical"
	case bytes >= large:
		return "ring"
	case bytes >= medium:
		return "RDH"
	}
	return "mesh"
}

// WriteText prints tools' results: per tool a table of its sizes, each
// variant's median and min-max, B/A, the verdict and the algorithm; with
// predictions, a table of them against the measured B/A range.
func WriteText(w io.Writer, tools []ToolResult) {
	for i, tr := range tools {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %d runs of A, %d of B; %s in %s, median (min-max) of the runs\n", tr.Tool, tr.RunsA, tr.RunsB, tr.Metric, tr.Unit)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "SIZE\tA\tB\tB/A\tVERDICT\tALGORITHM\n")
		for _, s := range tr.Sizes {
			alg := s.Algorithm
			if s.AlgorithmSource == "likely" {
				alg = "likely " + alg
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", Bytes(s.Bytes), spread(s.A), spread(s.B), ratio(s.Ratio), s.Verdict, alg)
		}
		tw.Flush()
		var any bool
		for _, s := range tr.Sizes {
			any = any || len(s.Predicted) > 0
		}
		if !any {
			continue
		}
		fmt.Fprintf(w, "\n%s against nccom-rings simulate's all-reduce (A: its rank order, B: its network order), %s:\n", tr.Tool, tr.Unit)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "SIZE\tALGORITHM\tOVERSUBSCRIPTION\tPREDICTED A\tPREDICTED B\tPREDICTED B/A\tMEASURED B/A (RANGE)\tPREDICTION\n")
		for _, s := range tr.Sizes {
			for _, p := range s.Predicted {
				inside := "outside the range"
				if p.Inside {
					inside = "inside the range"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s (%s-%s)\t%s\n", Bytes(s.Bytes), p.Algorithm, p.Oversubscription, p.A, p.B, ratio(p.Ratio), ratio(s.Ratio), ratio(s.RatioMin), ratio(s.RatioMax), inside)
			}
		}
		tw.Flush()
	}
}

func spread(s Spread) string {
	if s.Runs == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f (%.2f-%.2f)", s.Median, s.Min, s.Max)
}

func ratio(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", r)
}

// Bytes is a size as "8 B", "64 KiB", "1 GiB" when it is a whole number
// of the unit, else in bytes.
func Bytes(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}
