// Package clientchecks holds the client checks (each check's catalogue
// entry beside its body, a file per kind: session.go, stream.go,
// expiry.go, ...), the scripted server each check runs of its own, the
// runner of the client under test, and beside them the broken variants of
// the reference client that prove the checks can fail (*_fixtures.go),
// which `mcp-conform client reference --broken` runs.
package clientchecks
