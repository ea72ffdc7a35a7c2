// Package doclinks holds one test: every relative link of README.md and
// docs/ names a file that exists (issue 23: the README's sections moved
// into docs/, and a moved section's links must still resolve).
package doclinks
