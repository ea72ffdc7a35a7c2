package ring_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/record"
	"github.com/nccomring/libnccomring/ring"
)

// D28: every per-rank input from the gathered bytes. Each test runs
// Preset per rank with that rank's own platform, comm fields and
// variables, then Postset on every rank over the same fragments, and
// requires one outcome (oneVerdict): the same code and WARN, or the same
// rings.

// platformsOf gives each rank the platform p(r) answers, the network order
// asked everywhere (so a split would show in the stitch too).
func platformsOf(p func(r int) kanga.Resolver) func(r int) ring.PresetOptions {
	return func(r int) ring.PresetOptions {
		loc, _ := nodeorder.Parse([]string{"s/b", "s/a"}[r/orderLocal%2])
		return ring.PresetOptions{Platforms: p(r), Network: true, Location: loc}
	}
}

func switchV1On(ranks ...int) func(r int) kanga.Resolver {
	return func(r int) kanga.Resolver {
		for _, s := range ranks {
			if r == s {
				return kanga.Fixed(kanga.SwitchV1)
			}
		}
		return generic
	}
}

// The trial: NCCOM_RING_PLATFORM=trn3-switchv1 on one node's
// processes only (ranks 4-7 of 8), the network order on every rank.
// Before, ranks 0-3 stitched in network order and 4-7 in rank order, all
// with ncclSuccess; now every rank fails, naming rank 4 and the counts.
func TestPlatformOnOneNodeIsOneVerdict(t *testing.T) {
	j := d28Job(t, orderCluster(2), platformsOf(switchV1On(4, 5, 6, 7)), nil)
	v := oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, abi.InternalError, v.code)
	// 4 and 4: a tie goes to the value the lowest rank holds (rank 0's).
	assert.Equal(t, "ncclTopoPostset: rank 4 has platform trn3-switchv1, unlike rank 0 (platform generic, the most common): generic on 4 ranks, trn3-switchv1 on 4 ranks; every rank must run on one platform (D28)", v.text)
}

// Per-rank hooks answering differently (ranks 2-3 of 16 say SwitchV1):
// before, ranks 2-3 returned 0 and 14 others 3.
func TestHooksThatDisagreeAreOneVerdict(t *testing.T) {
	j := d28Job(t, orderCluster(4), platformsOf(switchV1On(2, 3)), nil)
	v := oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, abi.InternalError, v.code)
	assert.Equal(t, "ncclTopoPostset: rank 2 has platform trn3-switchv1, unlike rank 0 (platform generic, the most common): generic on 14 ranks, trn3-switchv1 on 2 ranks; every rank must run on one platform (D28)", v.text)

	// The majority on SwitchV1: the odd one out is the lowest generic rank.
	all := make([]int, 16)
	for r := range all {
		all[r] = r
	}
	j = d28Job(t, orderCluster(4), platformsOf(switchV1On(append(all[:5:5], all[6:]...)...)), nil)
	v = oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, "ncclTopoPostset: rank 5 has platform generic, unlike rank 0 (platform trn3-switchv1, the most common): trn3-switchv1 on 15 ranks, generic on 1 rank; every rank must run on one platform (D28)", v.text)
}

// An unknown NCCOM_RING_PLATFORM no longer fails Preset (S10 becomes a
// WARN of the export layer): its record says "unknown", and every rank's
// Postset fails naming the first such rank, before any other platform
// disagreement.
func TestUnknownPlatformIsRecordedAndRefusedByEveryRank(t *testing.T) {
	unknown := failingPlatform{&kanga.UnknownPlatformError{Value: "trn9"}}
	var frag abi.TopoRanks
	cl := orderCluster(2)
	require.NoError(t, ring.Preset(cl.comm(1), cl.graphs[0], &frag, ring.PresetOptions{Platforms: unknown}))
	f, ok := record.Read(&frag, 1)
	require.True(t, ok)
	assert.Equal(t, record.Unknown, f.Platform)

	j := d28Job(t, cl, platformsOf(func(r int) kanga.Resolver {
		switch r {
		case 3, 6:
			return unknown
		case 1:
			return kanga.Fixed(kanga.SwitchV1)
		}
		return generic
	}), nil)
	v := oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, abi.InternalError, v.code)
	assert.Equal(t, "ncclTopoPostset: rank 3's NCCOM_RING_PLATFORM named no platform (2 of 8 valid records say so): set it to generic or trn3-switchv1 on every rank (D28)", v.text)

	j = d28Job(t, cl, platformsOf(func(int) kanga.Resolver { return unknown }), nil)
	v = oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, "ncclTopoPostset: rank 0's NCCOM_RING_PLATFORM named no platform (8 of 8 valid records say so): set it to generic or trn3-switchv1 on every rank (D28)", v.text)
}

// comm->enablePod set on some ranks only: with more than one node, one
// WARN naming the lowest odd rank; on one node nothing to agree on.
func TestEnablePodOnSomeRanksIsOneVerdict(t *testing.T) {
	opt := func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: generic, PodNode: true} }
	j := d28Job(t, orderCluster(3), opt, func(r int, c *abi.Comm) { c.EnablePod = int32(boolInt(r >= 9)) })
	v := oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, abi.InternalError, v.code)
	assert.Equal(t, "ncclTopoPostset: rank 9 has enablePod 1, unlike rank 0 (enablePod 0, the most common): 0 on 9 ranks, 1 on 3 ranks; every rank must set comm->enablePod alike (D28)", v.text)

	// Every rank sets it: a pod job, stitched in node order (D27), whatever
	// the calling rank's own comm says at Postset.
	j = d28Job(t, orderCluster(3), opt, func(_ int, c *abi.Comm) { c.EnablePod = 1 })
	for r, c := range j.comms {
		c.EnablePod = int32(r % 2)
	}
	v = oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, v.code, v.text)

	one := newCluster(4).channel(0, []int{0, 1, 2, 3}, 0, 0).channels(1)
	j = d28Job(t, one, opt, func(r int, c *abi.Comm) { c.EnablePod = int32(r % 2) })
	v = oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, abi.Success, v.code, "one node: no pod job, nothing to agree on")
}

// nKangaRingChannels must agree on TRN3-SwitchV1, and only there; the
// count materialized is the records', not the calling rank's comm.
func TestKangaRingChannelsAgreeOnSwitchV1(t *testing.T) {
	opt := func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: kanga.Fixed(kanga.SwitchV1)} }
	j := d28Job(t, orderCluster(2), opt, func(r int, c *abi.Comm) { c.NKangaRingChannels = int32(2 + boolInt(r == 6)) })
	v := oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, abi.InternalError, v.code)
	assert.Equal(t, "ncclTopoPostset: rank 6 has nKangaRingChannels 3, unlike rank 0 (nKangaRingChannels 2, the most common): 2 on 7 ranks, 3 on 1 rank; every rank on TRN3-SwitchV1 must have the same count (D28)", v.text)

	j = d28Job(t, orderCluster(2), func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: generic} },
		func(r int, c *abi.Comm) { c.NKangaRingChannels = int32(r % 5) })
	v = oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, abi.Success, v.code, "not SwitchV1: the count is not used")

	j = d28Job(t, orderCluster(2), opt, func(_ int, c *abi.Comm) { c.NKangaRingChannels = 2 })
	all, _ := j.inputs()
	for r, own := range j.comms {
		comm := *own
		comm.NKangaRingChannels = int32(r % 5)
		res, err := ring.Postset(&comm, make([]int32, 8), all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc()})
		require.NoError(t, err)
		assert.Equal(t, int32(2), res.KangaPaths, "rank %d", r)
		assert.Equal(t, 32, res.KangaInts, "rank %d", r)
	}
}

// Records that cannot be read: on SwitchV1 an error naming the rank (a
// damaged one, or one of another version, quoted); on a generic job
// without pods nothing is refused.
func TestUnreadableRecords(t *testing.T) {
	for _, tc := range []struct {
		name     string
		platform kanga.Resolver
		breakIt  func(r *abi.Record)
		code     abi.Result
		text     string
	}{
		{"damaged on SwitchV1", kanga.Fixed(kanga.SwitchV1), func(r *abi.Record) { r.JbogID = 4 }, abi.InternalError,
			"ncclTopoPostset: rank 5's record is unreadable (damaged; 1 of 8 records are): on TRN3-SwitchV1 every rank's record is needed (D28)"},
		{"version 3 on SwitchV1", kanga.Fixed(kanga.SwitchV1), func(r *abi.Record) { r.Version = 3; r.Checksum = checksumFor(r) }, abi.InternalError,
			"ncclTopoPostset: rank 5's record is unreadable (version 3, this library reads version 2; 1 of 8 records are): on TRN3-SwitchV1 every rank's record is needed (D28)"},
		{"damaged on a generic job", generic, func(r *abi.Record) { r.Fingerprint++ }, abi.Success, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := d28Job(t, orderCluster(2), func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: tc.platform} }, nil)
			tc.breakIt(record.Of(&j.fragments[5]))
			v := oneVerdict(t, postsetEveryRank(t, j))
			assert.Equal(t, tc.code, v.code)
			assert.Equal(t, tc.text, v.text)
		})
	}
}

// checksumFor is the header's version-2 checksum, from its text, as the
// writer of another version that kept it would compute it.
func checksumFor(r *abi.Record) uint32 {
	const prime = 16777619
	words := []uint32{uint32(r.Magic), uint32(r.Version), uint32(r.Rank), uint32(r.Flags), r.Fingerprint, uint32(r.JbogID), uint32(r.VirtualCoreSize), 0}
	words = append(words, r.Location[:]...)
	var lanes [4]uint32
	for k := range lanes {
		lanes[k] = 2166136261
		for i := k; i < 16; i += 4 {
			lanes[k] = (lanes[k] ^ words[i]) * prime
		}
	}
	return (((lanes[0]*prime^lanes[1])*prime^lanes[2])*prime ^ lanes[3]) * prime
}

// Fragments of another ring stage (no magic: a host running the real
// libnccom on those ranks) are never refused: the job runs as before, and
// one INFO names the first such rank and how many.
func TestOtherRingStagesAreNotRefused(t *testing.T) {
	cl := orderCluster(2)
	plain := oneVerdict(t, postsetEveryRank(t, d28Job(t, cl, func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: generic} }, nil)))
	j := d28Job(t, cl, func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: generic} }, nil)
	for _, r := range []int{6, 2} {
		*record.Of(&j.fragments[r]) = abi.Record{}
	}
	v := oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, v.code, v.text)
	assert.Equal(t, plain.rings, v.rings)
	res := postsetOne(t, j, 0, generic)
	assert.Equal(t, "ncclTopoPostset: rank 2's fragment carries no record of this library (2 of 8 fragments: another ring stage, such as libnccom's own): not checked here, their own library checks them (D28)", res.RecordsInfo)
	assert.Empty(t, res.RecordsWarn)
}

// No fragment holds a valid record (the host did not gather +832...+895):
// one WARN on every rank, D9's rings, and the platform is each rank's own
// (the one case where a per-rank input decides, D28).
func TestNoValidRecordIsOneWarning(t *testing.T) {
	cl := orderCluster(2)
	j := d28Job(t, cl, platformsOf(func(int) kanga.Resolver { return generic }), nil)
	for r := range j.fragments {
		record.Of(&j.fragments[r]).Checksum ^= 1
	}
	record.Of(&j.fragments[3]).Magic = 0
	spy := &countingPlatform{}
	res := postsetOne(t, j, 1, spy)
	assert.Equal(t, 1, spy.family, "the calling rank's own platform")
	assert.Equal(t, "ncclTopoPostset: no fragment holds a valid record of this library (7 of 8 carry its magic, damaged or of another version): the host did not gather bytes +832...+895 of struct ncclTopoRanks, or its ranks run another version of this library; each rank takes its platform from itself and nodes are stitched in rank order (D28)", res.RecordsWarn)
	assert.False(t, res.Order.Network)
	assert.Empty(t, res.Order.Warn, "the one WARN says it all")
}

// What the calling rank holds at Postset changes nothing: comm->enablePod,
// nKangaRingChannels and nChannels differ on every rank, the verdict and
// rings do not (only the own-count WARN, D27, is the rank's).
func TestCallingRankStateChangesNothing(t *testing.T) {
	j := d28Job(t, orderCluster(3), platformsOf(func(int) kanga.Resolver { return generic }), nil)
	want := oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, want.code)
	for r, c := range j.comms {
		c.EnablePod, c.NKangaRingChannels = int32(r%2), int32(r%7) // 5 and 6 out of range
	}
	assert.Equal(t, want, oneVerdict(t, postsetEveryRank(t, j)))
}

// postsetOne is rank r's Postset over j's fragments, which must succeed.
func postsetOne(t *testing.T, j *job, r int, platform kanga.Resolver) ring.PostsetResult {
	t.Helper()
	all, _ := j.inputs()
	comm := *j.comms[r]
	res, err := ring.Postset(&comm, make([]int32, len(all)), all, ring.PostsetOptions{Platforms: platform, Alloc: newGoAlloc()})
	require.NoError(t, err)
	return res
}

// D27's own-count WARN in either direction (D28): a rank whose
// comm->nChannels (as its Preset set it) is below the job's count is told
// too, with both counts.
func TestOwnCountWarningWhenFewerChannels(t *testing.T) {
	cl := orderCluster(2)
	j := d28Job(t, cl, func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: generic} }, nil)
	comm := *j.comms[5]
	comm.NChannels = 1 // a host that lowered it below the job's 2
	all, _ := j.inputs()
	res, err := ring.Postset(&comm, make([]int32, 8), all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc()})
	require.NoError(t, err)
	assert.Equal(t, "ncclTopoPostset: this rank's graph has 1 channels (comm->nChannels), the job 2 (the smallest channel count of any fragment, first held by rank 0): give its ncclTopoGetNetDev a graph of 2 channels, or its channels use the NICs of another graph channel (D27, D28)",
		res.OwnChannelsWarning())
	comm = *j.comms[5]
	res, err = ring.Postset(&comm, make([]int32, 8), all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc()})
	require.NoError(t, err)
	assert.Empty(t, res.OwnChannelsWarning(), "the job's count: nothing to say")
}

// A WARN's counts list at most four values, the most common first, then
// how many others and on how many ranks: six nodes of 4 ranks, each with
// its own NICs (its own graph fingerprint), so the graph check lists 4
// and "2 other values on 8 ranks" (ties on the count go to the lowest
// first holder).
func TestDisagreementListsFourValues(t *testing.T) {
	cl := orderCluster(6)
	for m := range 6 {
		cl.graphs[m].Inter[0] = int32(10 + m)
	}
	j := orderJob(t, cl, everyRank, alternating)
	v := oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, v.code, v.text)
	fp := func(m int) string { return fmt.Sprintf("0x%08x", record.Fingerprint(cl.graphs[m])) }
	assert.Equal(t, fmt.Sprintf("ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank 4 (node 1) has graph fingerprint %s, unlike rank 0 (node 0; %s, the most common): %s on 4 ranks, %s on 4 ranks, %s on 4 ranks, %s on 4 ranks, 2 other values on 8 ranks; reordering nodes would change their NICs: stitching in rank order (D9) on every rank",
		fp(1), fp(0), fp(0), fp(1), fp(2), fp(3)), v.order.Warn)
}

// An unreadable record in a pod job (enablePod on more than one node) is
// an error too, with the pod job's words (D28).
func TestUnreadableRecordInAPodJob(t *testing.T) {
	opt := func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: generic, PodNode: true} }
	j := d28Job(t, orderCluster(2), opt, func(_ int, c *abi.Comm) { c.EnablePod = 1 })
	record.Of(&j.fragments[6]).Checksum++
	v := oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, abi.InternalError, v.code)
	assert.Equal(t, "ncclTopoPostset: rank 6's record is unreadable (damaged; 1 of 8 records are): with comm->enablePod on 2 nodes every rank's record is needed (D28)", v.text)
}

// With no valid record, nKangaRingChannels is the calling rank's own, and
// so its range is checked there (P5), on SwitchV1 only.
func TestNoValidRecordChecksTheOwnKangaRingCount(t *testing.T) {
	j := d28Job(t, orderCluster(2), func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: generic} }, nil)
	for r := range j.fragments {
		record.Of(&j.fragments[r]).Magic = 0
	}
	all, _ := j.inputs()
	comm := *j.comms[2]
	comm.NKangaRingChannels = 5
	_, err := ring.Postset(&comm, make([]int32, 8), all, ring.PostsetOptions{Platforms: kanga.Fixed(kanga.SwitchV1), Alloc: newGoAlloc()})
	requireNCCLError(t, err, abi.InvalidArgument, "ncclTopoPostset: comm->nKangaRingChannels 5 is outside [0, 4]")
	comm = *j.comms[2]
	comm.NKangaRingChannels = 5
	_, err = ring.Postset(&comm, make([]int32, 8), all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc()})
	require.NoError(t, err, "not SwitchV1: the count is not used")
}

// No valid record, every record of another version, and the ranks' own
// platforms differ (rank 0's hook says SwitchV1, the others' generic):
// each rank's facts are its own, so unreadable records refuse nothing,
// or rank 0 alone would fail (D24). Every rank stitches D9's rings.
func TestNoValidRecordUnreadableEverywhereIsOneVerdict(t *testing.T) {
	j := d28Job(t, orderCluster(2), func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: generic} }, nil)
	for r := range j.fragments {
		rec := record.Of(&j.fragments[r])
		rec.Version = 3
		rec.Checksum = checksumFor(rec)
	}
	all, _ := j.inputs()
	var rings [][]int32
	for r, own := range j.comms {
		platform := kanga.Resolver(generic)
		if r == 0 {
			platform = kanga.Fixed(kanga.SwitchV1)
		}
		comm := *own
		res, err := ring.Postset(&comm, make([]int32, 8), all, ring.PostsetOptions{Platforms: platform, Alloc: newGoAlloc()})
		require.NoError(t, err, "rank %d", r)
		assert.Contains(t, res.RecordsWarn, "(8 of 8 carry its magic, damaged or of another version)", "rank %d", r)
		if r == 0 {
			rings = append(rings, abi.Ints(comm.Channels[0].Ring.UserRanks, 8))
		}
	}
	assert.Equal(t, []int32{0, 1, 2, 3, 4, 5, 6, 7}, rings[0], "D9's ring from rank 0")
}

// A pod job in which some fragments are another ring stage's: they are not
// checked (D28), so the pod order of the valid records decides.
func TestPodOrderSkipsOtherRingStages(t *testing.T) {
	opt := func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: generic, PodNode: true} }
	j := d28Job(t, orderCluster(2), opt, func(_ int, c *abi.Comm) { c.EnablePod = 1 })
	*record.Of(&j.fragments[3]) = abi.Record{}
	v := oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, v.code, v.text)
}

// A record of another version in a job that needs none of what it
// carries (generic, no pods, rank order): no rank is refused, and one WARN
// names it with its version, identical on every rank (D28). A damaged
// record there is not named (a quick count does not checksum it).
func TestAnotherVersionInAGenericJobIsNamed(t *testing.T) {
	j := d28Job(t, orderCluster(2), func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: generic} }, nil)
	rec := record.Of(&j.fragments[5])
	rec.Version = 3
	rec.Checksum = checksumFor(rec)
	record.Of(&j.fragments[2]).Checksum ^= 1
	v := oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, v.code, v.text)
	for r := range j.comms {
		res := postsetOne(t, j, r, generic)
		assert.Equal(t, "ncclTopoPostset: rank 5's record is of version 3, this library reads version 2 (1 of 8 records are of another version): those ranks run another version of this library; this job needs nothing they carry, so every rank goes on (D28)",
			res.RecordsWarn, "rank %d", r)
	}
}

// D27: on TRN3-SwitchV1, a node whose JBOG id is 4 fails every rank, the
// WARN naming its first rank (before, ranks 0-7 succeeded and 8-15 failed).
func TestSwitchV1PreconditionOfOneNodeFailsEveryRank(t *testing.T) {
	cl := orderCluster(4)
	jbog := func(r int) int32 {
		if r/orderLocal == 2 {
			return 4
		}
		return 1 + int32(r%3)
	}
	j := gatherWith(t, cl.nRanks, func(int) int { return orderLocal }, func(r int) *abi.TopoGraph { return cl.graphs[r/orderLocal] },
		func(r int) ring.PresetOptions {
			return ring.PresetOptions{Platforms: kanga.Fixed{SwitchV1: true, JbogID: jbog(r)}}
		}, 0)
	j.platform = kanga.Fixed(kanga.SwitchV1)
	v := oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, abi.InternalError, v.code)
	assert.Equal(t, "ncclTopoPostset: kangaRing precondition failed: JBOG id of rank 8 is 4, expected 1, 2 or 3", v.text)
}
