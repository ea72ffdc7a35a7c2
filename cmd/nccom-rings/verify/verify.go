// Package verify is nccom-rings verify's checker: it reads a job's ring
// dumps (ringdump) as a whole and reports each way they disagree with each
// other or with a ring as a Finding that says what to check next. The
// command prints its Report as text, JSON or JUnit; nccom-rings report
// shows the same Findings in its page (package report).
package verify

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/ringdump"
)

// Finding is one way the ranks' dumps disagree with each other or with a
// ring. Rank, Channel and Other are -1 when the finding is not about one.
type Finding struct {
	Kind    string   `json:"kind"` // one of the Kind* constants
	Rank    int      `json:"rank"`
	Channel int      `json:"channel"`
	Other   int      `json:"other"`           // the rank it disagrees with
	Ranks   []int    `json:"ranks,omitempty"` // the missing ranks (the lowest 1000)
	Files   []string `json:"files,omitempty"` // the files involved
	Message string   `json:"message"`
	Hint    string   `json:"hint"` // what to check next: hints[Kind]
}

// Report is verify's verdict on one dump directory.
type Report struct {
	Dir      string `json:"dir"`
	Files    int    `json:"files"`    // dump files read and parsed; the others count in Unusable, not here
	Unusable int    `json:"unusable"` // dump files (or the directory) that could not be read or parsed
	Ranks    int    `json:"ranks"`    // the nRanks most files say
	Channels int    `json:"channels"` // the nChannels most successful ranks have
	Nodes    int    `json:"nodes"`
	OK       bool   `json:"ok"`
	// Findings come in three groups: the files (unusable, foreign,
	// duplicated, failed, missing, misshapen ranks) in rank order; then the
	// rings, the most contradicted rank first (blame); then the node order.
	Findings []Finding `json:"findings"`
	// Omitted counts the findings past maxFindings that were left out.
	Omitted int `json:"omitted"`
}

// The kinds of finding. Each has one hint (Hint), so that every finding
// says what to check next.
const (
	KindUnusable  = "unusable"  // a dump file (or DIR) that could not be read as a dump
	KindNRanks    = "nranks"    // a file whose nRanks is not most files'
	KindRankRange = "rank"      // a file whose rank is outside [0, nRanks)
	KindDuplicate = "duplicate" // two files for one rank
	KindFailed    = "failed"    // the rank's Postset failed
	KindNoRings   = "no-rings"  // success without rings
	KindMissing   = "missing"   // ranks with no file at all
	KindShape     = "shape"     // channel count, nodes or layout not most ranks'
	KindRange     = "range"     // a next, prev or userRanks entry outside [0, nRanks)
	KindNext      = "next"      // a next that most views contradict
	KindPrev      = "prev"      // a prev that most views contradict
	KindLink      = "link"      // r.next and s.prev disagree and no view has a majority
	KindUserRanks = "userRanks" // stale userRanks: not from the rank, or not the agreed ring
	KindCycle     = "cycle"     // the agreed ring does not reach every rank
	KindDoubling  = "doubling"  // a doubled channel that is not its graph channel (D10)
	KindDecision  = "decision"  // D25: ranks decided different node orders
	KindAsked     = "asked"     // D25: ranks asked different policies
	KindSequence  = "sequence"  // D25: a ring that does not follow the sequence
	KindLocation  = "location"  // D25: a rank whose location is not its node's
)

// hints is what to check next, one short line per kind, read after
// "check: " (docs/operating.md, "nccom-rings
// verify"; docs/errors.md "nccom-rings verify").
var hints = map[string]string{
	KindUnusable:  "how the file got there: the library writes each dump whole, as a regular file, so a cut, oversized, linked or FIFO file was changed after the job; copy it again from the rank's host, or rerun with NCCOM_RING_DUMP",
	KindNRanks:    "where the file came from: it is another job's; use one directory per run (NCCOM_RING_DUMP=DIR/<job id>)",
	KindRankRange: "where the file came from: it is another job's; use one directory per run (NCCOM_RING_DUMP=DIR/<job id>)",
	KindDuplicate: "the pid in each name: two runs wrote into one directory; use one directory per run",
	KindFailed:    "the WARN in docs/errors.md; a Postset diagnosis (\"rank S, channel c\") names the rank whose fragment is wrong, so look at rank S first",
	KindNoRings:   "the rank's log (NCCL_DEBUG=INFO prints 'dump written'): the file is damaged or from another writer",
	KindMissing:   "that rank's log for a 'cannot write rank N's wiring dump' WARN and that it reached ncclTopoPostset; on several hosts, that every host's files were gathered",
	KindShape:     "this rank's libnccomring version (its VERSION line) and that every node was given the same graph: the rank built another job",
	KindRange:     "this rank's libnccomring version: a rank outside the job is a damaged dump or another build",
	KindNext:      "this rank first, as most views contradict it: its libnccomring version and log (a rank that gathered other fragments builds other rings)",
	KindPrev:      "this rank first, as most views contradict it: its libnccomring version and log (a rank that gathered other fragments builds other rings)",
	KindLink:      "both ranks' libnccomring versions and logs: no view has a majority here",
	KindUserRanks: "this rank's Postset calls: userRanks is its own walk of every next, so stale ones come from other fragments (an earlier communicator, a dump not rewritten after the last Postset)",
	KindCycle:     "nodesFirstRank and each node's graph, and report the dumps: every rank agrees on rings that miss ranks, so the stitch itself is wrong",
	KindDoubling:  "this rank's libnccomring version: a doubled channel repeats its graph channel (D10)",
	KindDecision:  "the AllGather, or dumps of two runs in one directory: the decision comes from the gathered records alone, so the ranks saw different fragments",
	KindAsked:     "that NCCOM_RING_NODE_ORDER is exported to every rank: the network order applies only when every rank asks for it (docs/node-order.md)",
	KindSequence:  "each rank's libnccomring version: a library stitched in another order",
	KindLocation:  "NCCOM_RING_LOCATION: set one location per host (nccom-rings locate)",
}

// maxFindings bounds a report: one wrong next spoils every rank's
// userRanks, and thousands of lines say no more than the first few.
const maxFindings = 100

func (r *Report) add(f Finding) {
	if len(r.Findings) >= maxFindings {
		r.Omitted++
		return
	}
	if f.Hint == "" {
		f.Hint = hints[f.Kind]
	}
	r.Findings = append(r.Findings, f)
}

func (r *Report) addf(kind string, rank, channel, other int, format string, args ...any) {
	r.add(Finding{Kind: kind, Rank: rank, Channel: channel, Other: other, Message: fmt.Sprintf(format, args...)})
}

func (r *Report) Count() int { return len(r.Findings) + r.Omitted }

// Check checks the job as a whole from its ranks' dumps (files: those
// that could be read, sorted by rank; bad: ReadDir's errors for the
// others). It never stops at one bad file: each unusable, foreign,
// duplicated, failed or misshapen rank is one finding and is left out of
// the ring checks, which then check every other rank (checkRings). The
// node order (D25, order.go) is checked when nothing else was found.
func Check(dir string, files []ringdump.File, bad []error) Report {
	rep := Report{Dir: dir, Files: len(files), Findings: []Finding{}}
	byRank := checkFiles(&rep, files, bad)
	if byRank != nil {
		checkRings(&rep, byRank)
	}
	if rep.Count() == 0 && byRank != nil {
		checkOrder(&rep, byRank)
	}
	rep.OK = rep.Count() == 0
	return rep
}

// checkFiles reports the files that cannot take part in the ring checks
// and returns the dump of every rank that can, indexed by rank (nil for the
// others), or nil when there is none. The job's shape (nRanks, channels,
// nodes) is the one most files give, so that one wrong file is named
// rather than every file that disagrees with it: found in one pass over
// the files, a map from each value to its files (plurality), so that
// 40,000 files that each claim another shape take twice the time of
// 20,000, not four times (issue 34). Its work and memory follow the
// files present, never nRanks, which any file may set to anything: a
// count above the files found is a finding (the missing ranks), not an
// allocation; a message shows at most maxListed entries of a list.
func checkFiles(rep *Report, files []ringdump.File, bad []error) []*ringdump.Dump {
	var unusableRanks []int // ranks named by an unusable file's name
	for _, err := range bad {
		rank, path := badFile(err)
		f := Finding{Kind: KindUnusable, Rank: rank, Channel: -1, Other: -1, Message: err.Error()}
		if rank >= 0 {
			f.Message = fmt.Sprintf("rank %d: %v", rank, err)
			unusableRanks = append(unusableRanks, rank)
		}
		if path != "" {
			f.Files = []string{path}
		}
		rep.Unusable++
		rep.add(f)
	}
	if len(files) == 0 {
		return nil
	}
	at, held := plurality(len(files), func(i int) int { return files[i].Dump.NRanks })
	n := files[at].Dump.NRanks
	rep.Ranks = n
	if n <= 0 {
		rep.add(Finding{Kind: KindNRanks, Rank: -1, Channel: -1, Other: -1,
			Message: fmt.Sprintf("nRanks is %d in %d of %d files", n, held, len(files))})
		return nil
	}
	paths := map[int][]string{}
	byRank := map[int]*ringdump.Dump{}
	for _, f := range files {
		d := f.Dump
		switch {
		case d.NRanks != n:
			rep.add(Finding{Kind: KindNRanks, Rank: d.Rank, Channel: -1, Other: -1, Files: []string{f.Path},
				Message: fmt.Sprintf("rank %d: nRanks is %d (%s), but %d of %d files say %d", d.Rank, d.NRanks, quote.String(f.Path), held, len(files), n)})
		case d.Rank < 0 || d.Rank >= n:
			rep.add(Finding{Kind: KindRankRange, Rank: d.Rank, Channel: -1, Other: -1, Files: []string{f.Path},
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
	var good []int // one successful dump with rings
	for _, r := range present {
		switch d := byRank[r]; {
		case len(paths[r]) > 1:
			rep.add(Finding{Kind: KindDuplicate, Rank: r, Channel: -1, Other: -1, Files: paths[r],
				Message: fmt.Sprintf("rank %d: %d files, %s", r, len(paths[r]), quote.List(paths[r]))})
		case d.Result != 0:
			rep.add(Finding{Kind: KindFailed, Rank: r, Channel: -1, Other: -1, Files: paths[r],
				Message: fmt.Sprintf("rank %d: ncclTopoPostset failed with %s (%d): %s", r, quote.String(d.ResultName), d.Result, quote.String(d.Warn))})
		case d.Wiring == nil:
			rep.add(Finding{Kind: KindNoRings, Rank: r, Channel: -1, Other: -1, Files: paths[r],
				Message: fmt.Sprintf("rank %d: the dump says ncclTopoPostset succeeded but holds no rings (%s)", r, quote.String(paths[r][0]))})
		default:
			good = append(good, r)
		}
	}
	// A rank whose only file is unusable is that finding, not a missing one.
	accounted := slices.Clone(present)
	for _, r := range unusableRanks {
		if r < n {
			accounted = append(accounted, r)
		}
	}
	slices.Sort(accounted)
	accounted = slices.Compact(accounted)
	if missing, listed := missingRanks(accounted, n); missing > 0 {
		rep.add(Finding{Kind: KindMissing, Rank: -1, Channel: -1, Other: -1, Ranks: listed,
			Message: fmt.Sprintf("missing %s %s (of %d)", ranksNoun(missing), rankList(listed, missing), n)})
	}
	if len(good) == 0 {
		return nil
	}
	at, shared := plurality(len(good), func(i int) shapeKey { return shapeOf(byRank[good[i]]) })
	ref := byRank[good[at]]
	rep.Channels, rep.Nodes = ref.NChannels, ref.NNodes
	var checked []int
	for _, r := range good {
		if msg := shapeDifference(byRank[r], ref, shared, len(good), n); msg != "" {
			rep.add(Finding{Kind: KindShape, Rank: r, Channel: -1, Other: -1, Files: paths[r], Message: fmt.Sprintf("rank %d: %s", r, msg)})
			continue
		}
		checked = append(checked, r)
	}
	if len(checked) == 0 {
		return nil
	}
	// Every checked dump holds n userRanks per channel, so a slice of n
	// is no larger than one file's contents.
	all := make([]*ringdump.Dump, n)
	for _, r := range checked {
		all[r] = byRank[r]
	}
	return all
}

// badFile is the path of a file ReadDir could not use and the rank its
// name gives (-1 when none).
func badFile(err error) (rank int, path string) {
	var fe *ringdump.FileError
	var fmtErr *ringdump.FormatError
	switch {
	case errors.As(err, &fmtErr):
		path = fmtErr.Path
	case errors.As(err, &fe):
		path = fe.Path
	default:
		return -1, ""
	}
	if r, _, _, ok := ringdump.ParseFileName(filepath.Base(path)); ok {
		return r, path
	}
	return -1, path
}

// plurality is the index in [0, n) whose value (key(i), compared with
// ==) is held by the most indices, ties going to the value the lowest
// index holds, and how many hold it; best is that value's lowest index.
// One pass and one map from value to its holders: time and memory linear
// in n and in the keys' sizes, however many distinct values there are
// (issue 34: comparing every index with every value seen took 8.3 s for
// 40,000 files that each claim another shape).
func plurality[K comparable](n int, key func(i int) K) (best, held int) {
	type holders struct{ first, count int }
	seen := map[K]*holders{}
	for i := range n {
		k := key(i)
		h := seen[k]
		if h == nil {
			h = &holders{first: i}
			seen[k] = h
		}
		h.count++
		if h.count > held || h.count == held && h.first < best {
			best, held = h.first, h.count
		}
	}
	return best, held
}

// shapeKey is the job's shape as one dump gives it (its channels and
// nodes), as one map key: two dumps agree on the shape when their keys
// are equal.
type shapeKey struct {
	nChannels, graphChannels, nNodes int
	nodesFirstRank                   string // intsKey
}

func shapeOf(d *ringdump.Dump) shapeKey {
	return shapeKey{d.NChannels, d.GraphChannels, d.NNodes, intsKey(d.NodesFirstRank)}
}

// intsKey is s as a map key: equal for equal slices only.
func intsKey(s []int) string {
	b := make([]byte, 0, 4*len(s))
	for _, v := range s {
		b = strconv.AppendInt(b, int64(v), 10)
		b = append(b, ',')
	}
	return string(b)
}

// MaxListedMissing bounds the missing ranks a finding lists (its message
// names the first 20 and counts the rest).
const MaxListedMissing = 1000

// missingRanks counts the ranks of [0, n) not in present (sorted, each in
// [0, n), no repeats) and lists the lowest of them, at most
// MaxListedMissing: in time and memory proportional to the ranks present
// and listed, not to n.
func missingRanks(present []int, n int) (missing int, listed []int) {
	missing = n - len(present)
	next := 0 // the lowest rank not yet looked at
	for _, p := range append(present, n) {
		for ; next < p && len(listed) < MaxListedMissing; next++ {
			listed = append(listed, next)
		}
		if len(listed) == MaxListedMissing {
			break
		}
		next = p + 1
	}
	return missing, listed
}

// maxListed is how many entries of a dump's list a message shows.
const maxListed = 16

// intList is s as fmt's %v prints it, "[0 4 8]", when it has at most
// maxListed entries, else its first maxListed and its length: "[0 4 ...
// ...] (1000 entries)". A message costs the same for every file, whatever
// another file's list holds (issue 34).
func intList(s []int) string {
	if len(s) <= maxListed {
		return fmt.Sprint(s)
	}
	var b strings.Builder
	b.WriteByte('[')
	for _, v := range s[:maxListed] {
		b.WriteString(strconv.Itoa(v))
		b.WriteByte(' ')
	}
	fmt.Fprintf(&b, "...] (%d entries)", len(s))
	return b.String()
}

// shapeDifference says how d's job differs from ref's (the shape held by
// held of total ranks), or returns "" when d is well formed and they agree.
func shapeDifference(d, ref *ringdump.Dump, held, total, n int) string {
	most := fmt.Sprintf("%d of %d ranks", held, total)
	switch {
	case d.NChannels != ref.NChannels:
		return fmt.Sprintf("%d channels, but %s have %d", d.NChannels, most, ref.NChannels)
	case d.GraphChannels != ref.GraphChannels:
		return fmt.Sprintf("%d graph channels before doubling, but %s have %d", d.GraphChannels, most, ref.GraphChannels)
	case d.NNodes != ref.NNodes || !slices.Equal(d.NodesFirstRank, ref.NodesFirstRank):
		return fmt.Sprintf("nodes' first ranks %s, but %s have %s", intList(d.NodesFirstRank), most, intList(ref.NodesFirstRank))
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

// The ring checks (checkRings) and their blame.
//
// A channel's ring is held many times over: rank r's next says who follows
// r, the prev of that rank says it again from the other side, and every
// rank's userRanks is the whole ring as that rank walked it. Each of these
// is a view; for every rank x, the agreed next of x is the one more than
// half of the views of x's next give (and the agreed prev likewise). A
// rank's field that differs from the agreed value is a finding about that
// rank, weighed by how many views hold the agreed value: the number of
// others that contradict it. Where no value has a majority, a next and a
// prev that disagree are a finding about both ranks (weight 1 each), as
// the library's diagnosis counts a contradiction for both the ranks that
// could explain it (D24). The findings are printed by rank, the rank with
// the largest total weight first (ties: the lowest rank), so that the
// rank whose dump is wrong comes before the neighbours it contradicts.

// agreement is the agreed value of one direction (next or prev) for every
// rank on one channel, found with a majority vote (Boyer and Moore) in two
// passes over the views: O(n) memory whatever the number of views.
type agreement struct {
	cand    []int32 // the candidate; after tally, the agreed value if held by a majority
	support []int32 // the views holding cand
	total   []int32 // the views of this rank's value
}

func newAgreement(n int) agreement {
	return agreement{make([]int32, n), make([]int32, n), make([]int32, n)}
}

func (a agreement) reset() {
	clear(a.support)
	clear(a.total)
}

// vote is the first pass: support counts the candidate's lead.
func (a agreement) vote(x, v int) {
	switch {
	case a.support[x] == 0:
		a.cand[x], a.support[x] = int32(v), 1
	case a.cand[x] == int32(v):
		a.support[x]++
	default:
		a.support[x]--
	}
}

// tally is the second pass (after support is cleared): the views holding
// the candidate, and all views.
func (a agreement) tally(x, v int) {
	a.total[x]++
	if a.cand[x] == int32(v) {
		a.support[x]++
	}
}

// agreed is x's agreed value, when more than half of its views hold it.
func (a agreement) agreed(x int) (v int, ok bool) {
	if 2*a.support[x] > a.total[x] {
		return int(a.cand[x]), true
	}
	return -1, false
}

// deviation is one ring finding before it is formatted (only the
// maxFindings printed are). v holds its values, by kind (finding).
type deviation struct {
	kind          string
	rank, channel int
	other         int // the other rank of a link finding, else -1
	v             [5]int
	weight        int  // what it adds to its rank's blame (and other's, for KindLink)
	support       int  // the views holding the agreed value (KindNext, KindPrev, KindUserRanks)
	total         int  // all views of that value
	channelWide   bool // about the channel, not one rank (KindCycle)
	inUserRanks   bool // KindDoubling: prev and next agree, userRanks differ
}

// ringCheck is the state of checkRings over one job.
type ringCheck struct {
	n      int
	byRank []*ringdump.Dump // nil: a rank not checked
	next   agreement
	prev   agreement
	perm   []bool // perm[r]: r's userRanks on this channel is a permutation of [0, n)
	seen   []int  // seen[x] == stamp: x was seen in the userRanks isPermutation reads
	stamp  int    // one per isPermutation call
	devs   []deviation
	score  []int
}

// checkRings checks every channel across the ranks of byRank and reports
// what it finds in blame order.
func checkRings(rep *Report, byRank []*ringdump.Dump) {
	n := len(byRank)
	k := &ringCheck{n: n, byRank: byRank, next: newAgreement(n), prev: newAgreement(n),
		perm: make([]bool, n), seen: make([]int, n), score: make([]int, n)}
	for c := range rep.Channels {
		k.channel(c)
	}
	// Rank findings by blame, then the channel-wide ones; each rank's in
	// channel order.
	slices.SortStableFunc(k.devs, func(a, b deviation) int {
		switch {
		case a.channelWide != b.channelWide:
			if a.channelWide {
				return 1
			}
			return -1
		case a.channelWide:
			return 0
		case k.score[a.rank] != k.score[b.rank]:
			return k.score[b.rank] - k.score[a.rank]
		}
		return a.rank - b.rank
	})
	for _, d := range k.devs {
		if len(rep.Findings) >= maxFindings { // count it, format none past the bound
			rep.Omitted++
			continue
		}
		rep.add(d.finding())
	}
}

func (k *ringCheck) at(r, c int) ringdump.Channel { return k.byRank[r].Channels[c] }

func (k *ringCheck) in(v int) bool { return v >= 0 && v < k.n }

// views calls visit(a, b) for every view that says b follows a on channel
// c: each checked rank's next and prev, and each userRanks that is a
// permutation (one that names a rank twice says nothing reliable).
func (k *ringCheck) views(c int, visit func(a, b int)) {
	n := k.n
	for r, d := range k.byRank {
		if d == nil {
			continue
		}
		ch := d.Channels[c]
		if k.in(ch.Next) {
			visit(r, ch.Next)
		}
		if k.in(ch.Prev) {
			visit(ch.Prev, r)
		}
		if k.perm[r] {
			u := ch.UserRanks
			for i := range n {
				visit(u[i], u[(i+1)%n])
			}
		}
	}
}

// isPermutation reports whether u holds every rank of [0, n) once.
func (k *ringCheck) isPermutation(u []int) bool {
	k.stamp++
	for _, x := range u {
		if !k.in(x) || k.seen[x] == k.stamp {
			return false
		}
		k.seen[x] = k.stamp
	}
	return true
}

// channel finds channel c's agreed ring and each checked rank's deviations
// from it.
func (k *ringCheck) channel(c int) {
	for r, d := range k.byRank {
		k.perm[r] = d != nil && k.isPermutation(d.Channels[c].UserRanks)
	}
	k.next.reset()
	k.prev.reset()
	k.views(c, func(a, b int) { k.next.vote(a, b); k.prev.vote(b, a) })
	k.next.reset()
	k.prev.reset()
	k.views(c, func(a, b int) { k.next.tally(a, b); k.prev.tally(b, a) })
	for r, d := range k.byRank {
		if d == nil {
			continue
		}
		k.link(r, c, KindNext, d.Channels[c].Next, k.next, func(s int) int { return k.at(s, c).Prev })
		k.link(r, c, KindPrev, d.Channels[c].Prev, k.prev, func(s int) int { return k.at(s, c).Next })
		k.userRanks(r, c)
		k.doubling(r, c)
	}
	k.cycle(c)
}

// link checks rank r's next or prev (kind, its value v): against the
// agreed value of that direction (a), or where there is none, against the
// field of rank v that points back to r (back).
func (k *ringCheck) link(r, c int, kind string, v int, a agreement, back func(s int) int) {
	if !k.in(v) {
		k.addDev(deviation{kind: KindRange, rank: r, channel: c, other: -1, v: [5]int{fieldOf(kind), v, k.n}, weight: 1})
		return
	}
	b := -1 // what v's field pointing back says, when v is checked
	if k.byRank[v] != nil {
		b = back(v)
	}
	switch want, ok := a.agreed(r); {
	case ok && v != want:
		other := -1 // v, when its own field says otherwise (the message names it)
		if b >= 0 && b != r && v != r {
			other = v
		}
		k.addDev(deviation{kind: kind, rank: r, channel: c, other: other, v: [5]int{v, b, want},
			weight: int(a.support[r]), support: int(a.support[r]), total: int(a.total[r])})
	case !ok && b >= 0 && b != r:
		k.addDev(deviation{kind: KindLink, rank: r, channel: c, other: v, v: [5]int{fieldOf(kind), v, b}, weight: 1})
	}
}

// addDev keeps d and adds its weight to the blame of its rank, and of its
// other rank for a link that no majority settles (D24 votes for both).
func (k *ringCheck) addDev(d deviation) {
	k.devs = append(k.devs, d)
	if d.channelWide {
		return
	}
	k.score[d.rank] += d.weight
	if d.kind == KindLink {
		k.score[d.other] += d.weight
	}
}

// fields are the fields a finding names, by fieldOf.
var fields = [...]string{"next", "prev", "userRanks"}

// fieldOf is kind's index in fields (KindNext or KindPrev).
func fieldOf(kind string) int {
	if kind == KindNext {
		return 0
	}
	return 1
}

// userRanks checks that r's userRanks start at r and follow the agreed
// ring; the first place they do not is a finding (stale userRanks).
func (k *ringCheck) userRanks(r, c int) {
	u := k.at(r, c).UserRanks
	for i, x := range u {
		d := deviation{rank: r, channel: c, other: -1, weight: 1}
		switch {
		case !k.in(x):
			d.kind, d.v = KindRange, [5]int{2, x, k.n, i}
		case i == 0 && x != r:
			d.kind, d.v = KindUserRanks, [5]int{x}
		case i == 0:
			continue
		default:
			want, ok := k.next.agreed(u[i-1])
			if !ok || x == want {
				continue
			}
			s := int(k.next.support[u[i-1]])
			d.kind, d.v = KindUserRanks, [5]int{x, i, u[i-1], want}
			d.weight, d.support, d.total = s, s, int(k.next.total[u[i-1]])
		}
		k.addDev(d)
		return
	}
}

// doubling checks that channel c >= graphChannels repeats channel
// c - graphChannels on rank r (D10).
func (k *ringCheck) doubling(r, c int) {
	g := k.byRank[r].GraphChannels
	if c < g {
		return
	}
	dup, orig := k.at(r, c), k.at(r, c-g)
	if dup.Prev != orig.Prev || dup.Next != orig.Next {
		k.addDev(deviation{kind: KindDoubling, rank: r, channel: c, other: -1, v: [5]int{dup.Prev, dup.Next, c - g, orig.Prev, orig.Next}, weight: 1})
		return
	}
	// Only userRanks differ: name the first entry that does.
	for i := range min(len(dup.UserRanks), len(orig.UserRanks)) {
		if dup.UserRanks[i] != orig.UserRanks[i] {
			k.addDev(deviation{kind: KindDoubling, rank: r, channel: c, other: -1, v: [5]int{i, dup.UserRanks[i], c - g, orig.UserRanks[i]}, weight: 1, inUserRanks: true})
			return
		}
	}
}

// cycle follows the agreed ring (a checked rank's own next where there is
// no majority) from rank 0 and reports a ring that does not come back
// after exactly n steps. It says nothing where neither is known.
func (k *ringCheck) cycle(c int) {
	step := func(x int) (int, bool) {
		if v, ok := k.next.agreed(x); ok {
			return v, true
		}
		if d := k.byRank[x]; d != nil && k.in(d.Channels[c].Next) {
			return d.Channels[c].Next, true
		}
		return -1, false
	}
	cur, steps := 0, 0
	for {
		v, ok := step(cur)
		if !ok {
			return
		}
		cur, steps = v, steps+1
		if cur == 0 || steps == k.n {
			break
		}
	}
	if cur == 0 && steps == k.n {
		return
	}
	back := 0
	if cur == 0 {
		back = 1
	}
	k.addDev(deviation{kind: KindCycle, rank: 0, channel: c, other: -1, v: [5]int{steps, k.n, back}, channelWide: true})
}

// finding formats d. The values in d.v, by kind: KindRange: the field
// (fields), the value, n, and the index in userRanks; KindNext, KindPrev:
// the value, what the rank it names says back (-1: not checked), the
// agreed value; KindLink: the field, the value, what it says back;
// KindUserRanks: the entry, its index, the rank before it, the agreed next
// of that rank (only the entry when it is the first); KindDoubling: prev,
// next, the channel repeated, its prev and next (with inUserRanks: the
// first index that differs, its entry, the channel repeated, its entry);
// KindCycle: the steps
// taken, n, 1 when the walk came back to rank 0.
func (d deviation) finding() Finding {
	f := Finding{Kind: d.kind, Rank: d.rank, Channel: d.channel, Other: d.other, Hint: hints[d.kind]}
	v := d.v
	agreed := func(neighbour, x int, before bool) string {
		where := "after"
		if before {
			where = "before"
		}
		return fmt.Sprintf("%d of %d views have %d %s %d", d.support, d.total, neighbour, where, x)
	}
	switch d.kind {
	case KindRange:
		if v[0] == 2 {
			f.Message = fmt.Sprintf("rank %d: channel %d userRanks[%d] is %d, outside [0, %d)", d.rank, d.channel, v[3], v[1], v[2])
		} else {
			f.Message = fmt.Sprintf("rank %d: channel %d %s is %d, outside [0, %d)", d.rank, d.channel, fields[v[0]], v[1], v[2])
		}
	case KindNext, KindPrev:
		f.Message = fmt.Sprintf("rank %d: channel %d %s is %d, but ", d.rank, d.channel, d.kind, v[0])
		if v[1] >= 0 && v[1] != d.rank {
			f.Message += fmt.Sprintf("rank %d's %s is %d; ", v[0], fields[1-fieldOf(d.kind)], v[1])
		}
		f.Message += agreed(v[2], d.rank, d.kind == KindPrev)
	case KindLink:
		f.Message = fmt.Sprintf("rank %d: channel %d %s is %d, but rank %d's %s is %d", d.rank, d.channel, fields[v[0]], v[1], v[1], fields[1-v[0]], v[2])
	case KindUserRanks:
		if d.total == 0 {
			f.Message = fmt.Sprintf("rank %d: channel %d userRanks starts with %d, not with the rank (stale userRanks)", d.rank, d.channel, v[0])
		} else {
			f.Message = fmt.Sprintf("rank %d: channel %d userRanks[%d] is %d, but %s (stale userRanks)", d.rank, d.channel, v[1], v[0], agreed(v[3], v[2], false))
		}
	case KindDoubling:
		if d.inUserRanks {
			f.Message = fmt.Sprintf("rank %d: channel %d userRanks[%d] is %d, but channel %d's, which it repeats (D10), is %d", d.rank, d.channel, v[0], v[1], v[2], v[3])
		} else {
			f.Message = fmt.Sprintf("rank %d: channel %d (prev %d, next %d) differs from channel %d (prev %d, next %d), which it repeats (D10)", d.rank, d.channel, v[0], v[1], v[2], v[3], v[4])
		}
	case KindCycle:
		if v[2] == 1 {
			f.Message = fmt.Sprintf("rank 0: channel %d is a ring of %d ranks, not of all %d: following next from rank 0 comes back after %d", d.channel, v[0], v[1], v[0])
		} else {
			f.Message = fmt.Sprintf("rank 0: channel %d: following next from rank 0 does not come back to it in %d steps", d.channel, v[1])
		}
	}
	return f
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

// ranksNoun is "rank" or "ranks" for n of them (the command has its own
// plural for its summary lines; this package words only this one).
func ranksNoun(n int) string {
	if n == 1 {
		return "rank"
	}
	return "ranks"
}

// Unreadable is the report on a dump directory that could not be read at
// all, or holds no dump file: one unusable finding, so that --json prints
// a document whatever the input.
func Unreadable(dir string, err error) Report {
	rep := Report{Dir: dir, Unusable: 1, Findings: []Finding{}}
	rep.add(Finding{Kind: KindUnusable, Rank: -1, Channel: -1, Other: -1, Message: err.Error(),
		Hint: "that DIR is the directory the job's NCCOM_RING_DUMP named, and readable by this user"})
	return rep
}

// Hint is what to check next after a finding of kind (every Kind has
// one; "" for any other string): the hint each Finding carries.
func Hint(kind string) string { return hints[kind] }
