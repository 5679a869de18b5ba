//go:build !unix

package profiling

// withoutStderr runs f; here the runtime's message is not silenced.
func withoutStderr(f func() error) error { return f() }
