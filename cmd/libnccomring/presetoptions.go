package main

import (
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/ring"
)

// presetOptions is what rank's Preset carries in its record (D25, D27),
// from the registry: NCCOM_RING_NODE_ORDER and NCCOM_RING_LOCATION, read at
// every Preset, and NCCOM_RING_POD_ORDER, read once. A value that is not
// taken as given is one WARN on this rank when it is read (P8).
func presetOptions(rank int32, platforms kanga.Resolver) ring.PresetOptions {
	opt := ring.PresetOptions{Platforms: platforms}
	opt.Network = warnedValue(rank, nodeOrderParam)
	opt.Location = warnedValue(rank, locationParam)
	opt.PodNode = warnedValue(rank, podOrderParam) == ring.PodOrderNode
	return opt
}

// warnedValue is p's value in effect, with one WARN on rank when this read
// parsed a value its parser did not take as given.
func warnedValue[T any](rank int32, p *param[T]) T {
	r, fresh := p.get()
	if fresh && r.err != nil {
		warn(rank, r.err.Error())
	}
	return r.value
}
