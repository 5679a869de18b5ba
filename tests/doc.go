// Package tests holds xlogfs's end-to-end tests: they build the real
// xlogfs binary, mount stores with "xlogfs mount" (as a daemon and in the
// foreground), drive the mount through the os package and
// golang.org/x/sys/unix as dbench, MariaDB, tar, git and cp would, kill the
// daemon with SIGKILL, and check every store with "xlogfs check" afterwards.
//
// They need /dev/fuse, fusermount3 (Debian package fuse3) and dbench; a
// missing one fails the tests, since a skip would hide a missing feature.
// "make test" installs them. Run as root (chown, and mounting without
// user_allow_other).
//
// Every mount is unmounted when its test ends, pass or fail, and on ^C: a
// mount left behind would break the next run.
//
// Flags (go test ./tests -args ...): -dbench-seconds (10) is each dbench
// run's length; -crash-rounds (20) and -crash-seed set TestCrashKill9's
// number of kills and its random choices (the seed is logged).
package tests
