//go:build race

package main

// raceBuild: the tests run under the race detector.
const raceBuild = true
