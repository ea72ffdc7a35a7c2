package main

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/ring"
)

// logChannelCount prints D23's INFO line: the channel count every rank
// uses and the first rank whose fragment has it (docs/errors.md P7a). It is
// printed whether or not the call goes on to succeed.
func logChannelCount(rank int32, res ring.PostsetResult) {
	if res.GraphChannels == 0 || !infoEnabled(C.NCCOMRING_SUBSYS_INIT) {
		return
	}
	info(C.NCCOMRING_SUBSYS_INIT, rank, fmt.Sprintf("ncclTopoPostset: %d channels, the smallest channel count of any fragment, first held by rank %d (D23)", res.GraphChannels, res.CountRank))
}

// logOrder prints a committed Postset's lines about the records (D28: no
// valid record, other ring stages) and the node order (D25): its WARN (a
// fallback, nodes without a location) and its INFO line (a policy not
// applied) on every rank, identical on each; on rank 0 the sequence and
// its crossings.
func logOrder(rank int32, res ring.PostsetResult) {
	if res.RecordsWarn != "" {
		warn(rank, res.RecordsWarn)
	}
	if res.RecordsInfo != "" {
		info(C.NCCOMRING_SUBSYS_INIT, rank, res.RecordsInfo)
	}
	o := res.Order
	if o.Warn != "" {
		warn(rank, o.Warn)
	}
	if o.Info != "" {
		info(C.NCCOMRING_SUBSYS_INIT, rank, o.Info)
	}
	if rank == 0 && o.Summary != "" {
		info(C.NCCOMRING_SUBSYS_INIT, rank, o.Summary)
	}
}

// warnOwnChannels is D27's WARN after a committed Postset, on a rank whose
// own graph has more channels than the job's (docs/errors.md P7a).
func warnOwnChannels(rank int32, res ring.PostsetResult) {
	if text := res.OwnChannelsWarning(); text != "" {
		warn(rank, text)
	}
}

// logWalks prints rank 0's walks of the failing rings before the WARN
// (D24, docs/errors.md "Diagnosis"), as upstream prints a ring before it
// checks it.
func logWalks(rank int32, err error) {
	var failed *ring.RingsError
	if !errors.As(err, &failed) || !infoEnabled(C.NCCOMRING_SUBSYS_INIT) {
		return
	}
	for _, line := range failed.Walks {
		info(C.NCCOMRING_SUBSYS_INIT, rank, line)
	}
}

// logPostset prints a committed Postset's INFO lines (P12), in the order of
// docs/errors.md: on rank 0 one Channel line per ring (D17), then the pod
// fallback (D15), then the kangaRing paths on SwitchV1 (D13, P13).
func logPostset(comm *abi.Comm, res ring.PostsetResult) {
	if !infoEnabled(C.NCCOMRING_SUBSYS_INIT) {
		return
	}
	rank := comm.Rank
	if rank == 0 {
		nRanks := int(comm.NRanks)
		for c := range res.NChannels {
			ranks := abi.Ints(comm.Channels[c].Ring.UserRanks, nRanks)
			info(C.NCCOMRING_SUBSYS_INIT, rank, ring.ChannelLine(c, res.NChannels, ranks))
		}
	}
	if res.PodFallback {
		info(C.NCCOMRING_SUBSYS_INIT, rank, ring.PodFallbackLine(res.NNodes))
	}
	if res.KangaInts > 0 { // SwitchV1: at least one rank's path was copied
		for _, line := range kanga.PathLines(comm, res.KangaPaths, res.KangaInts) {
			info(C.NCCOMRING_SUBSYS_INIT, rank, line)
		}
	}
}
