package abi_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/layout"
)

// mirrors maps the C struct tags of package layout to their Go mirrors.
var mirrors = map[string]reflect.Type{
	"ncclRing":       reflect.TypeOf(abi.Ring{}),
	"ncclChannel":    reflect.TypeOf(abi.Channel{}),
	"ncclTopoRanks":  reflect.TypeOf(abi.TopoRanks{}),
	"ncclTopoGraph":  reflect.TypeOf(abi.TopoGraph{}),
	"ncclTopoSystem": reflect.TypeOf(abi.TopoSystem{}),
	"ncclComm":       reflect.TypeOf(abi.Comm{}),
}

// goName is the Go mirror's name for a C member.
func goName(c string) string {
	switch c {
	case "id":
		return "ID"
	case "crossracktorack":
		return "CrossRackToRack"
	case "nodes[0].count":
		return "Nodes0Count"
	}
	return strings.ToUpper(c[:1]) + c[1:]
}

// Every row of the layout table is a field of the Go mirror at the same
// offset with the same size (the compile-time asserts check the offsets;
// this also checks the sizes and that no row lacks a mirror).
func TestMirrorsMatchLayoutTable(t *testing.T) {
	for _, f := range layout.Fields {
		typ, ok := mirrors[f.Struct]
		require.True(t, ok, "no mirror for %s", f.Struct)
		field, ok := typ.FieldByName(goName(f.Name))
		require.True(t, ok, "%s has no field for %s.%s", typ, f.Struct, f.Name)
		assert.EqualValues(t, f.Offset, field.Offset, "%s.%s offset", f.Struct, f.Name)
		assert.EqualValues(t, f.Size, field.Type.Size(), "%s.%s size", f.Struct, f.Name)
	}
	for _, s := range layout.Structs {
		assert.EqualValues(t, s.Size, mirrors[s.Name].Size(), "sizeof %s", s.Name)
	}
}

func TestIntsViewsMemoryInPlace(t *testing.T) {
	buf := []int32{1, 2, 3}
	view := abi.Ints(abi.Address(buf), 3)
	view[1] = 7
	assert.Equal(t, []int32{1, 7, 3}, buf)
	assert.Nil(t, abi.Ints(0, 3))
	assert.Nil(t, abi.Ints(abi.Address(buf), 0))
	assert.Zero(t, abi.Address(nil))
}

func TestResultNames(t *testing.T) {
	assert.Equal(t, "ncclInvalidUsage", abi.InvalidUsage.String())
	assert.Equal(t, "ncclSuccess", abi.Success.String())
	assert.Equal(t, "ncclResult_t(9)", abi.Result(9).String())
	e := abi.Errorf(abi.InternalError, "x %d", 3)
	assert.Equal(t, "x 3", e.Error())
	assert.Equal(t, abi.InternalError, e.Code)
}
