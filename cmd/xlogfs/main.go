// Command xlogfs is a FUSE filesystem whose journal is an XFS-style
// write-ahead log, and the tools to inspect it and measure what its
// checksum costs. Run "xlogfs help" for the commands.
//
// Exit status: 0 on success; 2 when the command line itself is wrong (an
// unknown flag, a bad flag value, a missing argument: decided without
// looking at the system), with a short message, the command's usage line
// and a pointer to --help; 1 for every other failure.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
