package abi

import (
	"errors"
	"fmt"
)

// Result mirrors ncclResult_t (D1); its values are generated from the
// header into ztypes.go.
type Result int32

var resultNames = [...]string{"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError",
	"ncclInternalError", "ncclInvalidArgument", "ncclInvalidUsage"}

func (r Result) String() string {
	if r >= 0 && int(r) < len(resultNames) {
		return resultNames[r]
	}
	return fmt.Sprintf("ncclResult_t(%d)", int32(r))
}

// Error is a failed ring-stage call: the ncclResult_t it returns and the text
// of its one WARN line (docs/errors.md). Wrapped, if set, is the cause the
// text was built from (for errors.Is), not extra text.
type Error struct {
	Code    Result
	Text    string
	Wrapped error
}

func (e *Error) Error() string { return e.Text }

// Unwrap returns the cause, so errors.Is sees through an Error.
func (e *Error) Unwrap() error { return e.Wrapped }

// Errorf returns an *Error with code and the formatted WARN text. A %w verb
// records its operand as the cause.
func Errorf(code Result, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Text: err.Error(), Wrapped: errors.Unwrap(err)}
}
