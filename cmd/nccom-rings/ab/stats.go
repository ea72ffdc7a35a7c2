package ab

import (
	"fmt"
	"slices"
)

// MinRuns is the fewest runs of each variant at a size before ab compare
// judges a difference, and the fewest repeats ab writes. With 5 runs
// each, two orders that do not differ at all (every run an exchangeable
// draw) give min-max ranges that do not overlap in 2 of the C(10,5) = 252
// equally likely arrangements of the 10 values: under 1% per size. With 4
// each it is 2 of 70 (3%), with 3 each 2 of 20 (10%).
const MinRuns = 5

// Spread is the bus bandwidths of one variant's runs at one size.
type Spread struct {
	Runs   int       `json:"runs"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Values []float64 `json:"values"` // in the order of the runs' repeat index
}

// NewSpread is the median, min and max of values: the middle value of the
// sorted values, or the mean of the two middle ones when there is an even
// number of them.
func NewSpread(values []float64) Spread {
	s := Spread{Runs: len(values), Values: append([]float64{}, values...)}
	if len(values) == 0 {
		return s
	}
	v := slices.Clone(values)
	slices.Sort(v)
	n := len(v)
	s.Min, s.Max = v[0], v[n-1]
	if n%2 == 1 {
		s.Median = v[n/2]
	} else {
		s.Median = (v[n/2-1] + v[n/2]) / 2
	}
	return s
}

// The verdicts of Judge.
const (
	NoDifference = "no measurable difference"
	BFaster      = "B faster"
	BSlower      = "B slower"
	TooFewRuns   = "too few runs"
)

// Judge compares B's runs with A's at one size (higher bus bandwidth is
// faster). The rule: a gap is measurable only when the two min-max ranges
// do not overlap, every run of one variant above every run of the other;
// when they overlap, or touch, the gap is inside the spread: no
// measurable difference. With fewer than MinRuns runs of either variant
// it judges nothing (TooFewRuns).
func Judge(a, b Spread) string {
	switch {
	case a.Runs < MinRuns || b.Runs < MinRuns:
		return TooFewRuns
	case b.Min > a.Max:
		return BFaster
	case b.Max < a.Min:
		return BSlower
	}
	return NoDifference
}

// Ratio is B's median over A's, 0 when A's is 0.
func Ratio(a, b Spread) float64 {
	if a.Median == 0 {
		return 0
	}
	return b.Median / a.Median
}

// RatioRange is the least and the most B/A the runs allow: B's min over
// A's max, B's max over A's min (0, 0 when a bandwidth is 0).
func RatioRange(a, b Spread) (lo, hi float64) {
	if a.Max == 0 || a.Min == 0 {
		return 0, 0
	}
	return b.Min / a.Max, b.Max / a.Min
}

// Verdict says Judge's verdict with its counts for TooFewRuns.
func Verdict(a, b Spread) string {
	v := Judge(a, b)
	if v == TooFewRuns {
		return fmt.Sprintf("%s (A %d, B %d; %d each needed)", v, a.Runs, b.Runs, MinRuns)
	}
	return v
}
