package ring

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/record"
)

// This file is what Postset takes from the records of the gathered
// fragments (D28): the job's facts (its platform, whether it is a pod job,
// its nKangaRingChannels) and the one verdict on them, in D28's order,
// decided from the gathered bytes alone, so that every rank reaches it.
// gather counts the records as it passes each fragment (census.add: the
// flags word and the checksum, no allocation); only when they disagree is
// any record read again, to name the odd one out.

// jobBits are the flags a job's valid records must share (D28), or whose
// difference D25 must see: the platform, enablePod, nKangaRingChannels and
// the policy.
const jobBits = abi.RecordSwitchV1 | abi.RecordUnknownPlatform | abi.RecordEnablePod | record.KangaBits | abi.RecordNetwork

// fullBits are the flags of a job whose decisions read more than the
// flags (the network order's locations and fingerprints, SwitchV1's
// preconditions, pods' every record): its records are counted in full.
const fullBits = abi.RecordNetwork | abi.RecordSwitchV1 | abi.RecordEnablePod

// census is gather's count of the fragments' records (record.Kind). It
// counts in one of two modes. Full checks each record whole (record.Check:
// the checksum, the location words). Quick reads only the four words a job
// of the rank order needs (magic, version, rank, flags) and takes a record
// whose flags are in range as valid: a damaged record is then counted as
// valid, which changes no verdict as long as every such record agrees with
// the first and the first's checksum holds (see settled); when not, gather
// counts again in full. Gather starts quick unless rank 0's record asks
// for the network order, says TRN3-SwitchV1 or carries enablePod, the
// jobs whose decisions read more than the flags.
type census struct {
	full                     bool // the mode
	valid, none, unreadable  int
	firstValid, firstNone    int32 // -1: none
	firstUnreadable          int32
	unreadableVersion        int32 // the first unreadable record's version, -1 when damaged
	others                   int   // unreadable records of another version (their checksum holds)
	firstOther, otherVersion int32 // the first of them and its version
	flags, fingerprint       uint32
	differ                   uint32 // the jobBits in which some valid record differs from the first
	fingerprints             bool   // a valid record's fingerprint differs from the first's
	asking                   int    // valid records asking for the network order
	// elsewhere: some asking rank's location is not its head's, so each
	// node's location is found from its ranks (nodeorder.NodeLocation);
	// else it is its head's.
	elsewhere             bool
	podNode               int   // valid records with NCCOM_RING_POD_ORDER=node
	switchV1, enablePod   int   // valid records saying so
	countRank             int32 // the first rank whose fragment's channel count is not its record's; -1
	countOwn, countRecord int32 // and the two counts
	preconditionRank      int32 // the first SwitchV1 rank whose preconditions fail; -1
}

// reset starts a count, in full when full or when first's record (rank
// 0's) asks for more than the flags.
func (c *census) reset(first *abi.TopoRanks, full bool) {
	rec := record.Of(first)
	full = full || rec.Magic == abi.RecordMagic && rec.Flags&fullBits != 0
	*c = census{full: full, firstValid: -1, firstNone: -1, firstUnreadable: -1, firstOther: -1, countRank: -1, preconditionRank: -1}
}

// settled reports whether a quick count stands as a full one would have
// ended: every record it took as valid agrees with the first on the job's
// flags and on its channel count, none asks for more than the flags, none
// is unreadable or says its platform is unknown (a verdict counts those
// valid records), and the first's checksum holds (so that one is valid,
// and the job's facts are its flags). A full count is settled. (A quick
// count keeps no count of the flags but the first's: the ones it skips
// are the first's.)
func (c *census) settled(all []*abi.TopoRanks) bool {
	if c.full {
		return true
	}
	if c.differ != 0 || c.countRank >= 0 || c.unreadable > 0 || c.flags&(fullBits|abi.RecordUnknownPlatform) != 0 {
		return false
	}
	if c.valid == 0 {
		return true
	}
	k, _ := record.Check(all[c.firstValid], c.firstValid)
	return k == record.Valid
}

// add counts rank r's fragment f, whose ringRecv[:n] gather has found
// non-negative (so its channel count is at least n); head is the fragment
// of its node's head.
func (c *census) add(f, head *abi.TopoRanks, r int32, n int) {
	// A quick count's common case, in a few loads of a line gather has
	// loaded: a record like the first valid one in all but its location's
	// level count, and its fragment's channel count its record's.
	if rec := record.Of(f); !c.full && c.valid > 0 && rec.Magic == abi.RecordMagic && rec.Version == abi.RecordVersion &&
		rec.Rank == r && (uint32(rec.Flags)^c.flags)&^record.LevelBits == 0 && hasChannels(f, n, int(record.Channels(int32(c.flags)))) {
		c.valid++
		return
	}
	var kind record.Kind
	version := int32(-1)
	if c.full {
		kind, version = record.Check(f, r)
	} else {
		kind = record.Quick(f, r)
	}
	switch kind {
	case record.None:
		if c.none++; c.firstNone < 0 {
			c.firstNone = r
		}
		return
	case record.Unreadable:
		if c.unreadable++; c.firstUnreadable < 0 {
			c.firstUnreadable, c.unreadableVersion = r, version
		}
		if version >= 0 {
			if c.others++; c.firstOther < 0 {
				c.firstOther, c.otherVersion = r, version
			}
		}
		return
	}
	rec := record.Of(f)
	flags := uint32(rec.Flags)
	if c.valid++; c.firstValid < 0 {
		c.firstValid, c.flags, c.fingerprint = r, flags, rec.Fingerprint
	}
	c.differ |= (flags ^ c.flags) & jobBits
	c.fingerprints = c.fingerprints || rec.Fingerprint != c.fingerprint
	if flags&abi.RecordNetwork != 0 {
		c.asking++
		// The head's record line is warm: gather read its ring arrays.
		if h := record.Of(head); f != head && !c.elsewhere {
			c.elsewhere = rec.Location != h.Location || (uint32(h.Flags)^flags)&record.LevelBits != 0
		}
	}
	if flags&abi.RecordPodNode != 0 {
		c.podNode++
	}
	if flags&abi.RecordEnablePod != 0 {
		c.enablePod++
	}
	if flags&abi.RecordSwitchV1 != 0 {
		c.switchV1++
		if c.preconditionRank < 0 && kanga.CheckPreconditions(r, rec.VirtualCoreSize, rec.JbogID) != nil {
			c.preconditionRank = r
		}
	}
	if k := record.Channels(rec.Flags); c.countRank < 0 && !hasChannels(f, n, int(k)) {
		c.countRank, c.countOwn, c.countRecord = r, int32(ownChannels(f)), k
	}
}

// hasChannels reports whether f's channel count (D23) is k, knowing that
// its ringRecv[:n] are non-negative.
func hasChannels(f *abi.TopoRanks, n, k int) bool {
	if k < n {
		return false
	}
	for c := n; c < k; c++ {
		if f.RingRecv[c] < 0 {
			return false
		}
	}
	return k == len(f.RingRecv) || f.RingRecv[k] < 0
}

// facts is what the records say of the job (D28).
type facts struct {
	records  bool  // some fragment holds a valid record
	switchV1 bool  // some valid record says TRN3-SwitchV1
	pods     bool  // more than one node and some valid record carries enablePod
	paths    int32 // nKangaRingChannels, as the first valid record says
}

// factsOf is the job's facts from the census of a job of nNodes nodes.
func (c *census) factsOf(all []*abi.TopoRanks, nNodes int) facts {
	if c.valid == 0 {
		return facts{}
	}
	return facts{records: true, switchV1: c.switchV1 > 0, pods: nNodes > 1 && c.enablePod > 0,
		paths: record.KangaPaths(int32(c.flags))}
}

// verdict is D28's check of the records, in its order, after the
// fragments' own (gather, the walks): the channel-count match, unreadable
// records (on SwitchV1 or in a pod job), an unknown platform, the
// platform, enablePod, nKangaRingChannels, D27's preconditions and pod
// order. It returns the first that fails, the same on every rank, or nil.
func (c *census) verdict(all []*abi.TopoRanks, nNodes int, f facts, sc *scratch) *abi.Error {
	nRanks := len(all)
	if c.countRank >= 0 {
		return abi.Errorf(abi.InternalError, "ncclTopoPostset: rank %d's fragment has %d channels, but its record says its graph has %d: the fragment is not what its ncclTopoPreset wrote (D28)",
			c.countRank, c.countOwn, c.countRecord)
	}
	// With no valid record the facts are each rank's own (ownFacts): an
	// unreadable record then refuses nothing, or ranks would part.
	if c.unreadable > 0 && f.records && (f.switchV1 || f.pods) {
		what := "damaged"
		if c.unreadableVersion >= 0 {
			what = fmt.Sprintf("version %d, this library reads version %d", c.unreadableVersion, abi.RecordVersion)
		}
		job := "on TRN3-SwitchV1"
		if !f.switchV1 {
			job = fmt.Sprintf("with comm->enablePod on %d nodes", nNodes)
		}
		return abi.Errorf(abi.InternalError, "ncclTopoPostset: rank %d's record is unreadable (%s; %d of %d records are): %s every rank's record is needed (D28)",
			c.firstUnreadable, what, c.unreadable, nRanks, job)
	}
	if c.valid > 0 && (c.flags|c.differ)&abi.RecordUnknownPlatform != 0 {
		return unknownPlatform(all, c.valid)
	}
	if c.differ&^abi.RecordNetwork != 0 { // the policy is D25's, below
		if err := c.disagreement(all, nNodes, f, sc); err != nil {
			return err
		}
	}
	if c.preconditionRank >= 0 {
		fields := record.Decode(all[c.preconditionRank])
		return kanga.CheckPreconditions(c.preconditionRank, fields.VirtualCore, fields.JbogID).(*abi.Error)
	}
	// Pods: every valid record must say node (D27); a fragment of another
	// ring stage is not checked here (D28), and an unreadable one failed
	// above.
	if f.pods && c.podNode < c.valid {
		for r, frag := range all {
			if fields, ok := record.Read(frag, int32(r)); ok && !fields.PodNode {
				return abi.Errorf(abi.InvalidUsage, "ncclTopoPostset: comm->enablePod is set on %d nodes: UltraServer pod ordering (ncclTopoGetP2pPodInterNodeGraph) is not reimplemented; set %s=node on every rank to stitch in node order (rank %d did not)",
					nNodes, PodOrderEnvVar, r)
			}
		}
	}
	return nil
}

// disagreement is the part of verdict that runs only when some valid
// records differ in their jobBits: each value every valid record must
// share and some do not, each with its odd one out.
func (c *census) disagreement(all []*abi.TopoRanks, nNodes int, f facts, sc *scratch) *abi.Error {
	platforms := uint32(abi.RecordSwitchV1 | abi.RecordUnknownPlatform)
	checks := []struct {
		name, why string
		applies   bool
		value     func(record.Fields) int64
		show      func(int64) string
	}{
		{"platform", "every rank must run on one platform", c.differ&platforms != 0,
			func(g record.Fields) int64 { return int64(g.Platform) }, func(v int64) string { return record.Platform(v).String() }},
		{"enablePod", "every rank must set comm->enablePod alike", nNodes > 1 && c.differ&abi.RecordEnablePod != 0,
			func(g record.Fields) int64 { return int64(boolInt(g.EnablePod)) }, func(v int64) string { return fmt.Sprint(v) }},
		{"nKangaRingChannels", "every rank on TRN3-SwitchV1 must have the same count", f.switchV1 && c.differ&record.KangaBits != 0,
			func(g record.Fields) int64 { return int64(g.KangaChannels) }, func(v int64) string { return fmt.Sprint(v) }},
	}
	for _, check := range checks {
		if !check.applies {
			continue
		}
		t, err := tallyValid(all, sc, check.value)
		if err != nil {
			return err
		}
		if t.split() {
			return abi.Errorf(abi.InternalError, "ncclTopoPostset: %s (D28)", t.text(check.name, check.show, check.why))
		}
	}
	return nil
}

// unknownPlatform is the verdict on valid records that say their
// NCCOM_RING_PLATFORM named no platform: the lowest such rank, and how many
// of the valid records say so.
func unknownPlatform(all []*abi.TopoRanks, valid int) *abi.Error {
	first, unknown := -1, 0
	for r, frag := range all {
		if fields, ok := record.Read(frag, int32(r)); ok && fields.Platform == record.Unknown {
			if unknown++; first < 0 {
				first = r
			}
		}
	}
	return abi.Errorf(abi.InternalError, "ncclTopoPostset: rank %d's NCCOM_RING_PLATFORM named no platform (%d of %d valid records say so): set it to generic or trn3-switchv1 on every rank (D28)",
		first, unknown, valid)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tally is how many valid records hold each value of one field, for a
// WARN that names the odd one out (D28): the reference is the value most
// records hold (ties: the one the lowest rank holds), the odd one out the
// lowest rank that holds another.
type tally struct {
	values  []tallied // by count, most first; ties by first holder
	oddRank int32     // -1: every record agrees
	oddVal  int64
}

type tallied struct {
	value        int64
	count, first int32
}

// tallyValid tallies value over every valid record, in working memory from
// sc (the one path of Postset that reads records twice: a disagreement).
func tallyValid(all []*abi.TopoRanks, sc *scratch, value func(record.Fields) int64) (tally, *abi.Error) {
	keys := sc.ints(2 * len(all))
	if keys == nil {
		return tally{}, sc.err("ncclTopoPostset", len(all), 0)
	}
	pairs := pairsOf(keys)[:0]
	for r, frag := range all {
		if fields, ok := record.Read(frag, int32(r)); ok {
			pairs = append(pairs, uint64(uint32(value(fields)))<<32|uint64(r)) // within its room
		}
	}
	return tallyOf(pairs), nil
}

// tallyOf tallies pairs, value<<32 | rank (sorted here): every value a
// field takes fits its 32 bits.
func tallyOf(pairs []uint64) tally {
	slices.Sort(pairs)
	var t tally
	for i := 0; i < len(pairs); {
		j := i + 1
		for j < len(pairs) && pairs[j]>>32 == pairs[i]>>32 {
			j++
		}
		first := int32(uint32(pairs[i]))
		t.values = append(t.values, tallied{value: int64(pairs[i] >> 32), count: int32(j - i), first: first})
		i = j
	}
	slices.SortFunc(t.values, func(a, b tallied) int {
		if a.count != b.count {
			return int(b.count - a.count)
		}
		return int(a.first - b.first)
	})
	t.oddRank = -1
	for _, v := range t.values[min(1, len(t.values)):] {
		if t.oddRank < 0 || v.first < t.oddRank {
			t.oddRank, t.oddVal = v.first, v.value
		}
	}
	return t
}

func (t tally) split() bool { return t.oddRank >= 0 }

// maxTallied is how many values a WARN lists with their counts.
const maxTallied = 4

// text is "rank R has FIELD V, unlike rank Q (FIELD W, the most common):
// W on a ranks, V on b; WHY".
func (t tally) text(field string, show func(int64) string, why string) string {
	ref := t.values[0]
	var b strings.Builder
	fmt.Fprintf(&b, "rank %d has %s %s, unlike rank %d (%s %s, the most common): ", t.oddRank, field, show(t.oddVal), ref.first, field, show(ref.value))
	b.WriteString(t.counts(show))
	b.WriteString("; " + why)
	return b.String()
}

// counts lists the values and their counts, the most common first.
func (t tally) counts(show func(int64) string) string {
	var b strings.Builder
	for i, v := range t.values[:min(len(t.values), maxTallied)] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s on %d rank%s", show(v.value), v.count, plural(int(v.count)))
	}
	if rest := t.values[min(len(t.values), maxTallied):]; len(rest) > 0 {
		ranks := 0
		for _, v := range rest {
			ranks += int(v.count)
		}
		fmt.Fprintf(&b, ", %d other values on %d rank%s", len(rest), ranks, plural(ranks))
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// notes is D28's WARN when no fragment of a job of nRanks holds a valid
// record, else a WARN when some records are of another version of this
// library (which this job did not need, or it would have failed), and
// the INFO when some fragments hold no record of this library. (A damaged
// record a job does not need is not named: a quick count does not
// checksum it.)
func (c *census) notes(nRanks int) (warn, info string) {
	if c.valid == 0 {
		return fmt.Sprintf("ncclTopoPostset: no fragment holds a valid record of this library (%d of %d carry its magic, damaged or of another version): the host did not gather bytes +832...+895 of struct ncclTopoRanks, or its ranks run another version of this library; each rank takes its platform from itself and nodes are stitched in rank order (D28)",
			nRanks-c.none, nRanks), ""
	}
	if c.others > 0 {
		warn = fmt.Sprintf("ncclTopoPostset: rank %d's record is of version %d, this library reads version %d (%d of %d records are of another version): those ranks run another version of this library; this job needs nothing they carry, so every rank goes on (D28)",
			c.firstOther, c.otherVersion, abi.RecordVersion, c.others, nRanks)
	}
	if c.none > 0 {
		info = fmt.Sprintf("ncclTopoPostset: rank %d's fragment carries no record of this library (%d of %d fragments: another ring stage, such as libnccom's own): not checked here, their own library checks them (D28)",
			c.firstNone, c.none, nRanks)
	}
	return warn, info
}
