package ring

// ExactOnly returns opt with Postset's fast path off: the exact path alone,
// for the differential test (fastpath.go).
func ExactOnly(opt PostsetOptions) PostsetOptions {
	opt.exactOnly = true
	return opt
}

// TookFastPath reports whether the fast path took a successful Postset's
// fragments.
func TookFastPath(res PostsetResult) bool { return res.fast }
