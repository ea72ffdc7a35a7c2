// Package doclinks holds the tests of the documents' references: every
// relative link of README.md and docs/ names a file that exists (issue
// 23: the README's sections moved into docs/, and a moved section's links
// must still resolve), and every test and make target docs/security.md
// names exists (issue 34: each of its promises names the test that
// checks it).
package doclinks
