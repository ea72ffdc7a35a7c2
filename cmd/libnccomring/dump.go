package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/ring"
	"github.com/nccomring/libnccomring/ringdump"
	"github.com/nccomring/libnccomring/version"
)

// dumpDir is NCCOM_RING_DUMP, the directory where every rank's Postset
// writes its wiring dump (ringdump, README "Per-rank wiring dumps"). Unlike
// most variables it is read at every Postset and GetNetDev (params.go), so
// a job can turn it on for one communicator: one cgo call (a getenv), and a
// new Go string only when the value changed.
func dumpDir() (string, bool) {
	r, _ := dumpParam.get()
	return r.value, r.set
}

// dumpPaths is the one piece of state that outlives a call, and only while
// NCCOM_RING_DUMP is set: for each rank whose last Postset in this process
// succeeded and wrote its dump, that file's path, so that GetNetDev (which
// has no communicator, only the rank) can add its answers to the same file.
// A later Postset of the same rank replaces the entry; a failed one removes
// it. The mutex also serializes the rewrites of one file.
var dumpPaths struct {
	sync.Mutex
	byRank map[int32]string
}

// hostName is this host's name for the dump's file name and "host" field.
var hostName = sync.OnceValue(func() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
})

// dumpPostset writes rank's dump after a Postset that returned err (nil:
// success, and comm and nodesFirstRank hold what it committed). A call that
// failed before the rank was known writes nothing. A write error is one
// WARN and never changes the call's result.
func dumpPostset(dir string, comm *abi.Comm, nodesFirstRank []int32, res ring.PostsetResult, err error) {
	rank := comm.Rank
	if rank < 0 {
		return // no name to give the file
	}
	defer recoverDump(rank)
	d := &ringdump.Dump{
		Rank: int(rank), NRanks: int(comm.NRanks),
		ResultName: abi.Success.String(),
		Version:    version.Library, Host: hostName(), PID: os.Getpid(),
	}
	if err != nil {
		e := abiError(err)
		d.Result, d.ResultName, d.Warn = int(e.Code), e.Code.String(), e.Text
	} else {
		d.Wiring = wiringOf(comm, nodesFirstRank, res)
	}
	dumpPaths.Lock()
	defer dumpPaths.Unlock()
	if dumpPaths.byRank == nil {
		dumpPaths.byRank = make(map[int32]string)
	}
	delete(dumpPaths.byRank, rank)
	path, werr := ringdump.Write(dir, d)
	if werr != nil {
		warn(rank, fmt.Sprintf("ncclTopoPostset: %s=%s: cannot write rank %d's wiring dump: %v; the call's result stands", DumpEnvVar, dir, rank, werr))
		return
	}
	if err == nil {
		dumpPaths.byRank[rank] = path
	}
	info(C.NCCOMRING_SUBSYS_INIT, rank, "ncclTopoPostset: dump written to "+path)
}

// wiringOf reads back what a successful Postset committed.
func wiringOf(comm *abi.Comm, nodesFirstRank []int32, res ring.PostsetResult) *ringdump.Wiring {
	nRanks := int(comm.NRanks)
	w := &ringdump.Wiring{
		NNodes: res.NNodes, Node: int(comm.Node),
		NodesFirstRank: ints(nodesFirstRank[:res.NNodes]),
		GraphChannels:  res.GraphChannels, NChannels: res.NChannels,
		Channels: make([]ringdump.Channel, res.NChannels),
	}
	for c := range w.Channels {
		r := &comm.Channels[c].Ring
		w.Channels[c] = ringdump.Channel{Channel: c, Prev: int(r.Prev), Next: int(r.Next), UserRanks: ints(abi.Ints(r.UserRanks, nRanks))}
	}
	return w
}

func ints(s []int32) []int {
	out := make([]int, len(s))
	for i, v := range s {
		out[i] = int(v)
	}
	return out
}

// dumpNetDev adds a successful GetNetDev answer to rank's dump, when this
// process's last Postset of rank wrote one; the file is rewritten whole
// (temporary file and rename). A failure is one WARN and never changes the
// call's result.
func dumpNetDev(rank, channel, dev int32) {
	defer recoverDump(rank)
	dumpPaths.Lock()
	defer dumpPaths.Unlock()
	path, ok := dumpPaths.byRank[rank]
	if !ok {
		return
	}
	d, err := ringdump.Read(path)
	if err == nil {
		d.SetNetDev(int(channel), int(dev))
		_, err = ringdump.Write(filepath.Dir(path), d)
	}
	if err != nil {
		delete(dumpPaths.byRank, rank) // one WARN, not one per channel
		warn(rank, fmt.Sprintf("ncclTopoGetNetDev: %s: cannot record rank %d's NIC for channel %d in %s: %v; the call's result stands", DumpEnvVar, rank, channel, path, err))
	}
}

// recoverDump turns a panic while dumping into one WARN, so that the dump
// cannot change the result of the call it describes.
func recoverDump(rank int32) {
	if r := recover(); r != nil {
		warn(rank, fmt.Sprintf("%s: internal error while writing rank %d's wiring dump: %v; the call's result stands", DumpEnvVar, rank, r))
	}
}
