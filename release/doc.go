// Package release holds the tests of the release configuration
// (.goreleaser.yaml at the repository root).
package release
