/* no_symbols.c - a shared library that exports none of the four ring-stage
 * functions: the conformance harness must say which symbol is missing
 * (mk/proofs.mk, test-proofs-conformance). */
int nccomring_unrelated(int x);
int nccomring_unrelated(int x) { return x + 1; }
