package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/ringdump"
)

// Finding is one way the ranks' dumps disagree with each other or with a
// ring. Rank, Channel and Other are -1 when the finding is not about one.
type Finding struct {
	Rank    int      `json:"rank"`
	Channel int      `json:"channel"`
	Other   int      `json:"other"`           // the rank it disagrees with
	Ranks   []int    `json:"ranks,omitempty"` // the missing ranks (the lowest 1000)
	Files   []string `json:"files,omitempty"` // the files involved
	Message string   `json:"message"`
}

// Report is verify's verdict on one dump directory.
type Report struct {
	Dir      string    `json:"dir"`
	Files    int       `json:"files"`
	Ranks    int       `json:"ranks"`    // nRanks of the lowest rank's file
	Channels int       `json:"channels"` // nChannels of the lowest successful rank
	Nodes    int       `json:"nodes"`
	OK       bool      `json:"ok"`
	Findings []Finding `json:"findings"`
	// Omitted counts the findings past maxFindings that were left out.
	Omitted int `json:"omitted"`
}

// maxFindings bounds a report: one wrong next spoils every rank's
// userRanks, and thousands of lines say no more than the first few.
const maxFindings = 100

func (r *Report) add(f Finding) {
	if len(r.Findings) >= maxFindings {
		r.Omitted++
		return
	}
	r.Findings = append(r.Findings, f)
}

func (r *Report) addf(rank, channel, other int, format string, args ...any) {
	r.add(Finding{Rank: rank, Channel: channel, Other: other, Message: fmt.Sprintf(format, args...)})
}

func (r *Report) count() int { return len(r.Findings) + r.Omitted }

// verify checks the job as a whole from its ranks' dumps (files is never
// empty): first that there is exactly one successful dump per rank and that
// they agree on the rank count, channel counts and nodes; only then, as
// every later check would repeat such a finding, each channel: r.next == s
// exactly when s.prev == r, one cycle through every rank, userRanks from
// the rank along next, and each doubled channel the same as the one it
// repeats (D10); and then the inter-node order (D25, order.go).
func verify(dir string, files []ringdump.File) Report {
	rep := Report{Dir: dir, Files: len(files), Findings: []Finding{}}
	byRank, ok := checkRanks(&rep, files)
	if ok {
		for c := range rep.Channels {
			checkChannel(&rep, byRank, c)
		}
		if rep.count() == 0 {
			checkOrder(&rep, byRank)
		}
	}
	rep.OK = rep.count() == 0
	return rep
}

// checkRanks checks the files as a set and returns the dump of every rank
// when they are one successful dump per rank that agree on the shape of
// the job. Its work and memory follow the files present, never nRanks,
// which any file may set to anything: a count above the files found is a
// finding (the missing ranks), not an allocation.
func checkRanks(rep *Report, files []ringdump.File) ([]*ringdump.Dump, bool) {
	first := files[0].Dump // ReadDir sorts by rank
	n := first.NRanks
	rep.Ranks = n
	if n <= 0 {
		rep.addf(first.Rank, -1, -1, "rank %d: nRanks is %d (%s)", first.Rank, n, quote.String(files[0].Path))
		return nil, false
	}
	paths := map[int][]string{}
	byRank := map[int]*ringdump.Dump{}
	for _, f := range files {
		d := f.Dump
		switch {
		case d.NRanks != n:
			rep.add(Finding{Rank: d.Rank, Channel: -1, Other: first.Rank, Files: []string{f.Path},
				Message: fmt.Sprintf("rank %d: nRanks is %d (%s), but %s says %d (dumps of two jobs in one directory? use one directory per run)", d.Rank, d.NRanks, quote.String(f.Path), quote.String(files[0].Path), n)})
		case d.Rank < 0 || d.Rank >= n:
			rep.add(Finding{Rank: d.Rank, Channel: -1, Other: -1, Files: []string{f.Path},
				Message: fmt.Sprintf("rank %d is outside [0, %d) (%s)", d.Rank, n, quote.String(f.Path))})
		default:
			paths[d.Rank] = append(paths[d.Rank], f.Path)
			byRank[d.Rank] = d
		}
	}
	present := make([]int, 0, len(paths))
	for r := range paths {
		present = append(present, r)
	}
	slices.Sort(present)
	for _, r := range present {
		switch d := byRank[r]; {
		case len(paths[r]) > 1:
			rep.add(Finding{Rank: r, Channel: -1, Other: -1, Files: paths[r],
				Message: fmt.Sprintf("rank %d: %d files, %s (two runs into one directory? use one directory per run)", r, len(paths[r]), quoteList(paths[r]))})
		case d.Result != 0:
			rep.add(Finding{Rank: r, Channel: -1, Other: -1, Files: paths[r],
				Message: fmt.Sprintf("rank %d: ncclTopoPostset failed with %s (%d): %s", r, quote.String(d.ResultName), d.Result, quote.String(d.Warn))})
		case d.Wiring == nil:
			rep.add(Finding{Rank: r, Channel: -1, Other: -1, Files: paths[r],
				Message: fmt.Sprintf("rank %d: the dump says ncclTopoPostset succeeded but holds no rings (%s)", r, quote.String(paths[r][0]))})
		}
	}
	if missing, listed := missingRanks(present, n); missing > 0 {
		rep.add(Finding{Rank: -1, Channel: -1, Other: -1, Ranks: listed,
			Message: fmt.Sprintf("missing %s %s (of %d)", plural(missing, "rank", "ranks"), rankList(listed, missing), n)})
	}
	if rep.count() > 0 {
		return nil, false
	}
	// Every rank of [0, n) has exactly one file: n is at most the files.
	all := make([]*ringdump.Dump, n)
	for r, d := range byRank {
		all[r] = d
	}
	ref := all[0]
	rep.Channels, rep.Nodes = ref.NChannels, ref.NNodes
	for r, d := range all {
		if msg := shapeDifference(d, ref, n); msg != "" {
			rep.add(Finding{Rank: r, Channel: -1, Other: 0, Files: paths[r], Message: fmt.Sprintf("rank %d: %s", r, msg)})
		}
	}
	return all, rep.count() == 0
}

// maxListedMissing bounds the missing ranks a finding lists (its message
// names the first 20 and counts the rest).
const maxListedMissing = 1000

// missingRanks counts the ranks of [0, n) not in present (sorted, each in
// [0, n), no repeats) and lists the lowest of them, at most
// maxListedMissing: in time and memory proportional to the ranks present
// and listed, not to n.
func missingRanks(present []int, n int) (missing int, listed []int) {
	missing = n - len(present)
	next := 0 // the lowest rank not yet looked at
	for _, p := range append(present, n) {
		for ; next < p && len(listed) < maxListedMissing; next++ {
			listed = append(listed, next)
		}
		if len(listed) == maxListedMissing {
			break
		}
		next = p + 1
	}
	return missing, listed
}

// quoteList is "a", "b" (each quoted).
func quoteList(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = quote.String(p)
	}
	return strings.Join(q, ", ")
}

// shapeDifference says how d's job differs from ref's (rank 0's), or
// returns "" when d is well formed and they agree.
func shapeDifference(d, ref *ringdump.Dump, n int) string {
	switch {
	case d.NChannels != ref.NChannels:
		return fmt.Sprintf("%d channels, but rank 0 has %d", d.NChannels, ref.NChannels)
	case d.GraphChannels != ref.GraphChannels:
		return fmt.Sprintf("%d graph channels before doubling, but rank 0 has %d", d.GraphChannels, ref.GraphChannels)
	case d.NNodes != ref.NNodes || !slices.Equal(d.NodesFirstRank, ref.NodesFirstRank):
		return fmt.Sprintf("nodes' first ranks %v, but rank 0's are %v", d.NodesFirstRank, ref.NodesFirstRank)
	case d.Node < 0 || d.Node >= d.NNodes:
		return fmt.Sprintf("node %d is outside [0, %d)", d.Node, d.NNodes)
	case d.GraphChannels < 1 || d.NChannels < d.GraphChannels || d.NChannels != min(2*d.GraphChannels, 32):
		return fmt.Sprintf("%d channels from %d graph channels, where doubling capped at 32 gives %d (D10)", d.NChannels, d.GraphChannels, min(2*d.GraphChannels, 32))
	case len(d.Channels) != d.NChannels:
		return fmt.Sprintf("%d channels listed, but nChannels is %d", len(d.Channels), d.NChannels)
	}
	for c, ch := range d.Channels {
		switch {
		case ch.Channel != c:
			return fmt.Sprintf("entry %d of channels is channel %d", c, ch.Channel)
		case len(ch.UserRanks) != n:
			return fmt.Sprintf("channel %d has %d userRanks, but nRanks is %d", c, len(ch.UserRanks), n)
		}
	}
	return ""
}

// checkChannel checks channel c across every rank (byRank: one well-formed
// dump per rank).
func checkChannel(rep *Report, byRank []*ringdump.Dump, c int) {
	n := len(byRank)
	at := func(r int) ringdump.Channel { return byRank[r].Channels[c] }
	before := rep.count()
	for r := range n {
		ch := at(r)
		switch {
		case ch.Next < 0 || ch.Next >= n:
			rep.addf(r, c, -1, "rank %d: channel %d next is %d, outside [0, %d)", r, c, ch.Next, n)
		case ch.Prev < 0 || ch.Prev >= n:
			rep.addf(r, c, -1, "rank %d: channel %d prev is %d, outside [0, %d)", r, c, ch.Prev, n)
		case at(ch.Next).Prev != r:
			rep.addf(r, c, ch.Next, "rank %d: channel %d next is %d, but rank %d's prev is %d", r, c, ch.Next, ch.Next, at(ch.Next).Prev)
		case at(ch.Prev).Next != r:
			rep.addf(r, c, ch.Prev, "rank %d: channel %d prev is %d, but rank %d's next is %d", r, c, ch.Prev, ch.Prev, at(ch.Prev).Next)
		}
	}
	if rep.count() > before {
		return // the walks below would repeat these
	}
	// next is now a permutation: one cycle exactly when the walk from rank
	// 0 needs n steps to come back.
	steps, cur := 1, at(0).Next
	for ; cur != 0; steps++ {
		cur = at(cur).Next
	}
	if steps != n {
		rep.addf(0, c, -1, "rank 0: channel %d is a ring of %d ranks, not of all %d: following next from rank 0 comes back after %d", c, steps, n, steps)
		return
	}
	for r := range n {
		u := at(r).UserRanks
		if u[0] != r {
			rep.addf(r, c, -1, "rank %d: channel %d userRanks starts with %d, not with the rank", r, c, u[0])
			continue
		}
		for i := 1; i < n; i++ {
			if want := at(u[i-1]).Next; u[i] != want {
				rep.addf(r, c, u[i-1], "rank %d: channel %d userRanks[%d] is %d, but rank %d's next is %d", r, c, i, u[i], u[i-1], want)
				break
			}
		}
	}
	if g := byRank[0].GraphChannels; c >= g {
		for r := range n {
			dup, orig := at(r), byRank[r].Channels[c-g]
			if dup.Prev != orig.Prev || dup.Next != orig.Next || !slices.Equal(dup.UserRanks, orig.UserRanks) {
				rep.addf(r, c, -1, "rank %d: channel %d (prev %d, next %d) differs from channel %d (prev %d, next %d), which it repeats (D10)", r, c, dup.Prev, dup.Next, c-g, orig.Prev, orig.Next)
			}
		}
	}
}

// rankList is "5, 9": the first 20 of ranks, then how many more of total.
func rankList(ranks []int, total int) string {
	var b strings.Builder
	for i, r := range ranks {
		if i == 20 {
			fmt.Fprintf(&b, " and %d more", total-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, r)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
