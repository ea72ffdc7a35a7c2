package abi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nccomring/libnccomring/abi"
)

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
