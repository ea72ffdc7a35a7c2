package main

/*
#include <stdlib.h>
#include <string.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/ring"
	"github.com/nccomring/libnccomring/ringdump"
	"github.com/nccomring/libnccomring/version"
)

// dumpDir is NCCOM_RING_DUMP, the directory where every rank's Postset
// writes its wiring dump (ringdump, docs/operating.md "Per-rank wiring dumps"). Unlike
// most variables it is read at every Postset and GetNetDev (params.go), so
// a job can turn it on for one communicator: one cgo call (a getenv), and a
// new Go string only when the value changed.
func dumpDir() (string, bool) {
	r, _ := dumpParam.get()
	return r.value, r.set
}

// dumps is the one piece of state that outlives a call, and only while
// NCCOM_RING_DUMP is set: for each rank whose last Postset in this process
// succeeded and wrote its dump, that dump, so that GetNetDev (which has no
// communicator, only the rank) can rewrite the same file with its answers
// without reading anything back from a directory other users may share.
// A later Postset of the same rank replaces (and frees) the entry; a
// failed one, or a failed rewrite, removes it. The mutex also serializes
// the rewrites of one file, and guards scratch, the buffer the netDevs
// are encoded into.
var dumps struct {
	sync.Mutex
	byRank  map[int32]*rankDump
	scratch []byte
}

// rankDump is one rank's dump as it was written: the directory and file
// name (the file stays where its Postset wrote it even if the variable
// changes), the file's bytes but for the netDevs (ringdump.Encode's head
// and tail, in C memory: about the size of the file, which is about the
// size of the rank's userRanks, and never on the Go heap), and the
// GetNetDev answers so far (at most ringdump.MaxNetDevs).
type rankDump struct {
	dir, name  string
	mem        unsafe.Pointer // head, then tail; C.free'd by release
	head, tail int
	netDevs    []ringdump.NetDev
}

func (r *rankDump) headBytes() []byte { return unsafe.Slice((*byte)(r.mem), r.head) }
func (r *rankDump) tailBytes() []byte {
	return unsafe.Slice((*byte)(unsafe.Add(r.mem, r.head)), r.tail)
}

func (r *rankDump) release() {
	C.free(r.mem)
	r.mem = nil
}

// keep copies head and tail into C memory for the rewrites.
func keep(dir, name string, head, tail []byte) (*rankDump, error) {
	mem := C.nccomring_malloc(C.size_t(len(head) + len(tail)))
	if mem == nil {
		return nil, fmt.Errorf("out of memory keeping its %d bytes for the GetNetDev answers", len(head)+len(tail))
	}
	C.memcpy(mem, unsafe.Pointer(&head[0]), C.size_t(len(head)))
	C.memcpy(unsafe.Add(mem, len(head)), unsafe.Pointer(&tail[0]), C.size_t(len(tail)))
	return &rankDump{dir: dir, name: name, mem: mem, head: len(head), tail: len(tail)}, nil
}

// write rewrites the file with the netDevs so far. The directory is
// opened and checked again (ringdump.OpenDir: never created, opened
// component by component, no link on its path followed); the file is
// replaced through a new temporary one.
func (r *rankDump) write() error {
	fd, err := ringdump.OpenDir(r.dir)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	dumps.scratch = ringdump.AppendNetDevs(dumps.scratch[:0], r.netDevs)
	return ringdump.WriteFile(fd, r.dir, r.name, r.headBytes(), dumps.scratch, r.tailBytes())
}

// setNetDev records dev as channel's answer, replacing an earlier one for
// the channel; false when it would be one more than ringdump.MaxNetDevs.
func (r *rankDump) setNetDev(channel, dev int) bool {
	for i := range r.netDevs {
		if r.netDevs[i].Channel == channel {
			r.netDevs[i].Dev = dev
			return true
		}
	}
	if len(r.netDevs) == ringdump.MaxNetDevs {
		return false
	}
	r.netDevs = append(r.netDevs, ringdump.NetDev{Channel: channel, Dev: dev})
	return true
}

// forget drops rank's dump; dumps is locked.
func forget(rank int32) {
	if r := dumps.byRank[rank]; r != nil {
		r.release()
		delete(dumps.byRank, rank)
	}
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
// failed before the rank was known writes nothing. A write error (a
// directory refused, ringdump.CreateDir, among them) is one WARN and never
// changes the call's result.
func dumpPostset(dir string, comm *abi.Comm, nodesFirstRank []int32, res ring.PostsetResult, err error) {
	rank := comm.Rank
	if rank < 0 {
		return // no name to give the file
	}
	defer recoverDump(rank)
	dumps.Lock()
	defer dumps.Unlock()
	if dumps.byRank == nil {
		dumps.byRank = make(map[int32]*rankDump)
	}
	forget(rank)
	path, kept, werr := writePostset(dir, comm, nodesFirstRank, res, err)
	if werr != nil {
		warn(rank, fmt.Sprintf("ncclTopoPostset: %s=%s: cannot write rank %d's wiring dump: %v; the call's result stands", DumpEnvVar, quote.String(dir), rank, werr))
		return
	}
	if kept != nil {
		dumps.byRank[rank] = kept
	}
	if infoEnabled(C.NCCOMRING_SUBSYS_INIT) {
		info(C.NCCOMRING_SUBSYS_INIT, rank, "ncclTopoPostset: dump written to "+quote.String(path))
	}
}

// writePostset builds and writes the dump; kept is what the rewrites need,
// for a successful Postset.
func writePostset(dir string, comm *abi.Comm, nodesFirstRank []int32, res ring.PostsetResult, err error) (path string, kept *rankDump, werr error) {
	d := &ringdump.Dump{
		Rank: int(comm.Rank), NRanks: int(comm.NRanks),
		ResultName: abi.Success.String(),
		Version:    version.Library, Host: hostName(), PID: os.Getpid(),
	}
	if err != nil {
		e := abiError(err)
		d.Result, d.ResultName, d.Warn = int(e.Code), e.Code.String(), e.Text
	} else {
		// Refused before the rings are gathered into Go memory.
		if werr := ringdump.CheckSize(d.Rank, d.NRanks, res.NChannels); werr != nil {
			return "", nil, werr
		}
		d.Wiring = wiringOf(comm, nodesFirstRank, res)
	}
	head, tail, werr := ringdump.Encode(d)
	if werr != nil {
		return "", nil, werr
	}
	fd, werr := ringdump.CreateDir(dir)
	if werr != nil {
		return "", nil, werr
	}
	defer syscall.Close(fd)
	name := ringdump.FileName(d.Rank, d.Host, d.PID)
	if werr := ringdump.WriteFile(fd, dir, name, head, tail); werr != nil {
		return "", nil, werr
	}
	path = filepath.Join(dir, name)
	if err == nil {
		if kept, werr = keep(dir, name, head, tail); werr != nil {
			return "", nil, werr
		}
	}
	return path, kept, nil
}

// wiringOf reads back what a successful Postset committed.
func wiringOf(comm *abi.Comm, nodesFirstRank []int32, res ring.PostsetResult) *ringdump.Wiring {
	nRanks := int(comm.NRanks)
	w := &ringdump.Wiring{
		NNodes: res.NNodes, Node: int(comm.Node),
		NodesFirstRank: ringdump.Ints(nodesFirstRank[:res.NNodes]),
		GraphChannels:  res.GraphChannels, NChannels: res.NChannels,
		Channels: make([]ringdump.Channel, res.NChannels),
	}
	for c := range w.Channels {
		r := &comm.Channels[c].Ring
		w.Channels[c] = ringdump.Channel{Channel: c, Prev: int(r.Prev), Next: int(r.Next), UserRanks: ringdump.Ints(abi.Ints(r.UserRanks, nRanks))}
	}
	w.Order = orderOf(res)
	return w
}

// orderOf is the dump's view of the node order (D25): this rank's own
// gathered record (D28: the policy and location hashes Postset saw, not
// what the environment holds now, which in a process that plays several
// ranks is the last rank's), the location's name only when the
// environment's value hashes to the record's, and Postset's decision.
func orderOf(res ring.PostsetResult) *ringdump.Order {
	name, _ := locationParam.seen()
	own := ringdump.Own{Valid: res.OwnValid, Network: res.Own.Network, Location: res.Own.Location, Env: name}
	o := res.Order
	return ringdump.OrderOf(own, o.Asked, o.Network, o.Warn+o.Info, o.Sequence)
}

// dumpNetDev adds a successful GetNetDev answer to rank's dump, when this
// process's last Postset of rank wrote one, and rewrites the file from
// what it kept: nothing is read back. A failure is one WARN, stops the
// recording for that rank until its next Postset, and never changes the
// call's result.
func dumpNetDev(rank, channel, dev int32) {
	defer recoverDump(rank)
	dumps.Lock()
	defer dumps.Unlock()
	r := dumps.byRank[rank]
	if r == nil {
		return
	}
	var err error
	if !r.setNetDev(int(channel), int(dev)) {
		err = fmt.Errorf("it holds the answers for %d channels already, the most a dump records", ringdump.MaxNetDevs)
	} else {
		err = r.write()
	}
	if err != nil {
		path := filepath.Join(r.dir, r.name)
		forget(rank) // one WARN, not one per channel
		warn(rank, fmt.Sprintf("ncclTopoGetNetDev: %s: cannot record rank %d's NIC for channel %d in %s: %v; the call's result stands", DumpEnvVar, rank, channel, quote.String(path), err))
	}
}

// recoverDump turns a panic while dumping into one WARN, so that the dump
// cannot change the result of the call it describes.
func recoverDump(rank int32) {
	if r := recover(); r != nil {
		warn(rank, fmt.Sprintf("%s: internal error while writing rank %d's wiring dump: %v; the call's result stands", DumpEnvVar, rank, r))
	}
}
